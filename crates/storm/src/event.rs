//! [`Event`]: one published request, shared by every subscriber it goes to.
//!
//! An event is what a publisher's request carried: operation, mode, context
//! and the params encapsulation **verbatim** (size, version and bytes), as
//! `Bytes` sliced from the publisher's frame. It is wrapped in an `Arc` once
//! and the same allocation is queued for every subscriber: fan-out copies
//! no payload.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;

use floe::wire::{Context, Encapsulation};

use crate::qos::atoi;
use crate::types::{EventData, OperationMode};

/// A published event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The operation name, copied from the publisher's request.
    pub operation: String,
    /// The operation mode, copied.
    pub mode: OperationMode,
    /// The request context, copied.
    pub context: Context,
    /// The params encapsulation, verbatim: encoding version and data (a
    /// zero-copy slice of the publisher's frame).
    pub params: Encapsulation,
    /// The `cost` context entry (atoi; 0 when absent), for link filtering.
    pub cost: i32,
    /// Whether the event arrived over a link (such events are not
    /// forwarded over further links: one hop).
    pub from_link: bool,
    /// `params` in wire form (header + data), built once on first use and
    /// then shared by every delivery of the event.
    wire: OnceLock<Bytes>,
}

impl Event {
    /// A shared event from a publisher's request.
    pub fn new(
        operation: impl Into<String>,
        mode: OperationMode,
        context: Context,
        params: Encapsulation,
    ) -> Arc<Event> {
        let cost = context.get("cost").map_or(0, |c| atoi(c));
        Arc::new(Event {
            operation: operation.into(),
            mode,
            context,
            params,
            cost,
            from_link: false,
            wire: OnceLock::new(),
        })
    }

    /// A shared event from one `EventData` received over a link.
    ///
    /// # Errors
    ///
    /// If `data.data` is not exactly one encapsulation.
    pub fn from_link(data: EventData) -> floe::wire::Result<Arc<Event>> {
        let cost = data.context.get("cost").map_or(0, |c| atoi(c));
        Ok(Arc::new(Event {
            operation: data.op,
            mode: crate::link::operation_mode(data.mode),
            context: data.context,
            params: parse_encapsulation(data.data)?,
            cost,
            from_link: true,
            wire: OnceLock::new(),
        }))
    }

    /// The params encapsulation in wire form (6-byte header included), as
    /// `Proxy::invoke` takes it. The copy is made once per event, not once
    /// per subscriber.
    pub fn wire_params(&self) -> &Bytes {
        self.wire
            .get_or_init(|| floe::runtime::encapsulation_bytes(&self.params))
    }

    /// Approximate memory held by the event (for queue accounting).
    pub fn size(&self) -> usize {
        self.params.data.len() + self.operation.len() + 64
    }
}

/// Parses a whole encapsulation (size, version, data) held in `bytes`.
///
/// # Errors
///
/// Out of bounds if the size does not match the bytes.
fn parse_encapsulation(bytes: Bytes) -> floe::wire::Result<Encapsulation> {
    let len = bytes.len();
    let mut dec = floe::wire::Decoder::new(bytes);
    let e = dec.read_encapsulation()?;
    if !dec.is_empty() {
        return Err(floe::wire::Error::encapsulation(format!(
            "encapsulation of {} bytes in a buffer of {len}",
            e.wire_size()
        )));
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_read_from_context() {
        let mut ctx = Context::new();
        let e = Event::new(
            "o",
            OperationMode::Normal,
            ctx.clone(),
            Encapsulation::default(),
        );
        assert_eq!(e.cost, 0);
        ctx.insert("cost".into(), "9".into());
        let e = Event::new("o", OperationMode::Normal, ctx, Encapsulation::default());
        assert_eq!(e.cost, 9);
        assert!(!e.from_link);
        assert_eq!(&e.wire_params()[..], &[6, 0, 0, 0, 1, 1]);
    }
}
