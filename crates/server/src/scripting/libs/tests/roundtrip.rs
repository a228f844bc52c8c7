//! Randomized round trips (placeholder filled below).
