"""Simulation at scale: SimGrid platforms (platform), the SMPI runner (runner), plots (plot).

See docs/simulation.md for the user's view and sim/README.md for the presets.
"""
