//! The originals' generators: their random numbers, change batches and synthetic graphs.

pub mod changegen;
pub mod graphgen;
pub mod rng;
