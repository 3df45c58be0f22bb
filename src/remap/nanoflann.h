// nanoflann's k-d tree for weight generation, included through this header only: under SimGrid's
// SMPI, mpi.h defines malloc/free/calloc/realloc as macros (to share simulated buffers), which
// would rewrite nanoflann's own calls to them; the spatial index needs plain memory.
#pragma once
#ifdef ISTHMUS_SMPI
#undef malloc
#undef free
#undef calloc
#undef realloc
#endif
#include <nanoflann.hpp>
