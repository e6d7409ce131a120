//! The one seam between a connection and what dispatches the requests it
//! receives: [`Dispatcher`]. The object adapter implements it; the
//! connection knows no adapter, only this trait.

use std::any::Any;
use std::sync::Arc;

use floe_wire::protocol::Request;

use super::Connection;
use crate::outcome::Dispatch;

/// What a connection hands the requests it receives to: the adapter that
/// accepted it, or the one an outgoing connection was given
/// (`Connection::set_adapter`, a bidirectional connection).
pub(crate) trait Dispatcher: Send + Sync + 'static {
    /// Dispatches `request`, received on `connection`.
    fn dispatch(self: Arc<Self>, request: Request, connection: Connection) -> Dispatch;

    /// The name of the adapter (connection info, traces and metrics).
    fn name(&self) -> &str;

    /// Forgets the incoming connection `key` ([`Connection::key`]), which
    /// has ended.
    fn untrack(self: Arc<Self>, key: usize);

    /// The dispatcher as `Any`, for the adapter to find itself again
    /// (`Connection::adapter`).
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}
