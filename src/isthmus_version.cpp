namespace isthmus { extern const char* const version; const char* const version = "0.1.0"; }
