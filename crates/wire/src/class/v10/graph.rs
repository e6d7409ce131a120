//! The checks on a class graph read in encoding 1.0, once every instance is
//! in: each referenced id came, no cycle (unless accepted), and no chain of
//! references longer than the height limit (dropping a graph recurses once
//! per link).
//!
//! Encoding 1.1 makes these checks while reading, because instances nest
//! there; in 1.0 an instance may be read before or after the instances
//! that reference it, so only the whole graph tells. Ice 3.7.8 itself
//! (C++) rejects only an instance that references itself in 1.0; floe
//! rejects every cycle unless [`crate::Decoder::set_accept_class_cycles`],
//! because a cycle of shared handles leaks.

use crate::class::value::ValuePtr;
use crate::error::{Error, Result};

/// An instance of the graph: referenced, read, or both.
#[derive(Debug, Clone)]
pub(super) struct Slot {
    pub(super) id: u32,
    pub(super) ptr: ValuePtr,
    /// The instance has been read.
    pub(super) done: bool,
    /// Slots this instance references (in its known slices).
    pub(super) refs: Vec<usize>,
    /// Deepest instance that referenced this one before it was read (0:
    /// the parameters or the exception), for `Ice.ClassGraphDepthMax`.
    pub(super) depth: usize,
}

/// What [`check_graph`] enforces.
#[derive(Clone, Copy, Debug)]
pub(super) struct GraphLimits {
    pub(super) accept_cycles: bool,
    pub(super) height_max: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mark {
    New,
    OnPath,
    Done,
}

/// Checks the instances of an encapsulation (`slots`, with the slots each
/// references), without recursion: a hostile graph cannot exhaust the stack.
pub(super) fn check_graph(slots: &[Slot], limits: GraphLimits) -> Result<()> {
    if let Some(missing) = slots.iter().find(|s| !s.done) {
        return Err(Error::marshal(format!(
            "index for class received, but no instance (id {})",
            missing.id
        )));
    }
    let too_high = |height: usize| {
        Error::marshal(format!(
            "class graph too high: a chain of {height} references exceeds {}",
            limits.height_max
        ))
    };
    let mut mark = vec![Mark::New; slots.len()];
    // Longest chain of references from each instance (1 = no references),
    // not counting references that close a cycle.
    let mut height = vec![1usize; slots.len()];
    // Depth-first: (slot, index of the next reference to follow).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..slots.len() {
        if mark[root] != Mark::New {
            continue;
        }
        mark[root] = Mark::OnPath;
        stack.push((root, 0));
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            if let Some(&child) = slots[node].refs.get(*next) {
                *next += 1;
                match mark[child] {
                    Mark::New => {
                        mark[child] = Mark::OnPath;
                        stack.push((child, 0));
                    }
                    Mark::OnPath if !limits.accept_cycles => {
                        return Err(Error::marshal("cycle detected during Value unmarshaling"));
                    }
                    Mark::OnPath => {}
                    Mark::Done => height[node] = height[node].max(height[child] + 1),
                }
                continue;
            }
            stack.pop();
            mark[node] = Mark::Done;
            if height[node] > limits.height_max {
                return Err(too_high(height[node]));
            }
            if let Some(&(parent, _)) = stack.last() {
                height[parent] = height[parent].max(height[node] + 1);
            }
        }
    }
    Ok(())
}
