//! Volley server library: everything `volley-server` runs, exposed for tests.
pub mod config;
pub mod engine;
