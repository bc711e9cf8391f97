//! Trace writers (in progress).
