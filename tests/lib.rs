//! Shared helpers for the integration tests (see main.rs).
