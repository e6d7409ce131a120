//! # floe-storm
//!
//! An IceStorm-compatible publish/subscribe broker. Section numbers (§)
//! refer to `shared/reference/ice-protocol.md`, §8 being the IceStorm wire
//! contract.
//!
//! A tour:
//!
//! - [`types`]: the IceStorm Slice types encoded by hand (QoS, LinkInfo,
//!   EventData, exceptions) and [`types::RawProxy`].
//! - [`qos`]: QoS validation, exactly as IceStorm 3.7 does it.
//! - [`event`]: a published request, shared (`Arc` + `Bytes`) across subscribers.
//! - [`sink`]: the [`sink::SubscriberSink`] seam between delivery logic and the network.
//! - [`subscriber`]: per-subscriber bounded queues and the delivery state machine.
//! - [`link`]: federation: `forward(EventDataSeq)` encoding, cost filtering.
#![warn(missing_docs)]

pub mod event;
pub mod qos;
pub mod sink;
pub mod subscriber;
pub mod types;
