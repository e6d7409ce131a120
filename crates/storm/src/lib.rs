//! floe-storm: an IceStorm-compatible publish/subscribe broker.
#![warn(missing_docs)]
