//! The `Process` facet (`Ice::Process`): `shutdown` calls
//! [`Communicator::shutdown`]; `writeMessage(message, fd)` writes the
//! message and a newline to stdout (fd 1) or stderr (fd 2), which are
//! `Ice.StdOut` and `Ice.StdErr` when those are set.

use std::sync::Arc;

use crate::object_model::communicator::Communicator;
use crate::object_model::current::Current;
use crate::object_model::servant::{DispatchError, Servant};

use super::OpResult;

/// The facet's servant.
pub(super) fn facet(communicator: &Communicator) -> Arc<dyn Servant> {
    let communicator = communicator.clone();
    super::facet("::Ice::Process", move |current, params| {
        match current.operation.as_str() {
            "shutdown" => {
                communicator.shutdown();
                Ok(current.empty_reply())
            }
            "writeMessage" => write_message(current, params),
            _ => Err(DispatchError::operation_not_exist()),
        }
    })
}

/// `Process::writeMessage(string message, int fd)`.
fn write_message(current: &Current, params: floe_wire::Encapsulation) -> OpResult {
    use std::io::Write;
    let mut dec = current.params_decoder(params)?;
    let message = dec.read_string()?;
    let fd = dec.read_i32()?;
    let _ = match fd {
        2 => writeln!(std::io::stderr(), "{message}"),
        _ => writeln!(std::io::stdout(), "{message}").and_then(|_| std::io::stdout().flush()),
    };
    Ok(current.empty_reply())
}
