//! Volley server library: everything `volley-server` runs, exposed for tests.
pub mod engine;
pub mod config;
