//! [`Event`]: one published request, shared by every subscriber it goes to.
//!
//! An event is what a publisher's request carried: operation, mode, context
//! and the params encapsulation **verbatim** (size, version and bytes), as
//! `Bytes` sliced from the publisher's frame. It is wrapped in an `Arc` once
//! and the same allocation is queued for every subscriber, and sent with
//! `Proxy::invoke_encapsulation` (the data beside the frame head in a
//! vectored write): forwarding copies no payload.

use bytes::Bytes;
use std::sync::Arc;

use floe::wire::{Context, Encapsulation};

use crate::qos::atoi;
use crate::slice::ice;
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
            mode: operation_mode(data.mode),
            context: data.context,
            params: Encapsulation::from_wire(data.data)?,
            cost,
            from_link: true,
        }))
    }

    /// The params encapsulation in wire form (6-byte header included), as
    /// a link's `EventData` carries it (one copy per link forward; links
    /// are few, subscribers get the shared body).
    pub fn wire_params(&self) -> Bytes {
        self.params.to_wire()
    }

    /// Approximate memory held by the event (for queue accounting).
    pub fn size(&self) -> usize {
        self.params.data.len() + self.operation.len() + 64
    }
}

/// Whether `event` may cross a link of cost `link_cost`.
pub fn crosses(link_cost: i32, event: &Event) -> bool {
    !event.from_link && (link_cost == 0 || event.cost <= link_cost)
}

/// The wire mode of a received `EventData`.
pub fn operation_mode(mode: ice::OperationMode) -> OperationMode {
    match mode {
        ice::OperationMode::Normal => OperationMode::Normal,
        ice::OperationMode::Nonmutating => OperationMode::Nonmutating,
        ice::OperationMode::Idempotent => OperationMode::Idempotent,
    }
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
    }
}
