//! The CLI's tests that need features rtl or mpi (each says what it checks without them): one
//! module per command, linked into one test binary.
mod diff_cli;
mod mpi_cli;
mod regress_cli;
mod swap_in_cli;
