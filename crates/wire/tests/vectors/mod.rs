//! The golden vectors' Slice types and their checks, shared by
//! `golden.rs` (against `golden/vectors.txt`) and `live_ice.rs` (against
//! Ice's output now).

pub mod checks;
pub mod class_types;
pub mod classes10;
#[allow(dead_code)]
pub mod types;
