//! The floe implementation of Interop::Test, hand-written over the untyped
//! `Servant` API (what generated code will do): decodes each operation's
//! parameters with floe-wire, checks the operation mode as Ice servers do, and
//! encodes results, user exceptions and failures like py_server.py.
#![allow(dead_code)]

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use floe_runtime::{
    Communicator, Current, Dispatch, DispatchError, DispatchResult, Encapsulation, Identity,
    ObjectAdapter, OperationMode, Properties, Response, Servant,
};
use floe_wire::class::{ClassFormat, ClassRef};
use floe_wire::{Decoder, Encoder, ProxyData};

use super::classes::*;
use super::types::*;

/// Counters shared by every facet of the servant.
#[derive(Default)]
pub struct State {
    oneway_total: AtomicI32,
    idem_calls: AtomicI32,
    drop_calls: AtomicI32,
}

/// The Interop::Test servant.
pub struct TestI {
    state: Arc<State>,
}

/// A running floe server: identity "test" (default facet and "facetA").
pub struct FloeServer {
    /// Its communicator.
    pub communicator: Communicator,
    /// Its adapter.
    pub adapter: ObjectAdapter,
    /// The listening port on 127.0.0.1.
    pub port: u16,
}

impl FloeServer {
    /// `tcp -h 127.0.0.1 -p <port>`.
    pub fn endpoint(&self) -> String {
        format!("tcp -h 127.0.0.1 -p {}", self.port)
    }

    /// Starts the server on a free port with `props`.
    pub async fn start(props: Properties) -> FloeServer {
        Self::start_on(props, "tcp -h 127.0.0.1 -p 0").await
    }

    /// Starts the server listening on `endpoints` (e.g. `ssl -h 127.0.0.1
    /// -p 0`); `port` is the first endpoint's.
    pub async fn start_on(props: Properties, endpoints: &str) -> FloeServer {
        let communicator = Communicator::with_properties(props);
        let adapter = communicator
            .create_object_adapter_with_endpoints("Interop", endpoints)
            .await
            .expect("floe server: create adapter on 127.0.0.1");
        let state = Arc::new(State::default());
        let ident = Identity::from_name("test");
        adapter
            .add(
                ident.clone(),
                Arc::new(TestI {
                    state: state.clone(),
                }),
            )
            .expect("floe server: add test");
        adapter
            .add_facet(ident, "facetA", Arc::new(TestI { state }))
            .expect("floe server: add facetA");
        adapter.activate();
        let port = adapter.endpoints()[0].port;
        FloeServer {
            communicator,
            adapter,
            port,
        }
    }

    /// Destroys the communicator.
    pub async fn stop(self) {
        self.communicator.destroy().await;
    }
}

fn params_decoder(params: Encapsulation) -> Result<Decoder, DispatchError> {
    let mut dec = Decoder::from_encapsulation(params)?;
    dec.set_value_factories(server_value_factories());
    dec.set_accept_class_cycles(true);
    Ok(dec)
}

fn user_exception(
    current: &Current,
    format: ClassFormat,
    ex: &dyn floe_wire::UserException,
) -> DispatchError {
    DispatchError::EncodedUserException(current.encode_reply(|e| {
        e.set_class_format(format);
        e.write_user_exception(ex);
    }))
}

/// Closes the connection of `current` without a reply (the client sees it drop).
fn drop_connection(current: &Current) {
    if let Some(conn) = &current.connection {
        conn.abort();
    }
}

impl TestI {
    fn check_mode(current: &Current) -> Result<(), DispatchError> {
        let idempotent = matches!(current.operation.as_str(), "idemDropOnce");
        let ok = match current.mode {
            OperationMode::Normal => !idempotent,
            _ => idempotent,
        };
        if ok {
            Ok(())
        } else {
            Err(DispatchError::UnknownLocalException(format!(
                "::Ice::MarshalException: unexpected operation mode {:?} for {}",
                current.mode, current.operation
            )))
        }
    }

    fn dispatch_sync(&self, current: &Current, params: Encapsulation) -> DispatchResult {
        Self::check_mode(current)?;
        let mut d = params_decoder(params)?;
        let reply = match current.operation.as_str() {
            "opPrims" => {
                let b = d.read_bool()?;
                let y = d.read_u8()?;
                let s = d.read_i16()?;
                let i = d.read_i32()?;
                let l = d.read_i64()?;
                let f = d.read_f32()?;
                let dd = d.read_f64()?;
                let st = d.read_string()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| {
                    e.write_bool(b);
                    e.write_u8(y);
                    e.write_i16(s);
                    e.write_i32(i);
                    e.write_i64(l);
                    e.write_f32(f);
                    e.write_f64(dd);
                    e.write_string(&st);
                })
            }
            "opByteSeq" => {
                let v = d.read_byte_seq()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write_byte_seq(&v))
            }
            "opSeqs" => {
                let v: Seqs = d.read()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write(&v))
            }
            "opDicts" => {
                let a: StringIntDict = d.read()?;
                let b: IntStringDict = d.read()?;
                let c: StringMixedDict = d.read()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| {
                    e.write(&b);
                    e.write(&c);
                    e.write(&a);
                })
            }
            "opEnums" => {
                let c: Color = d.read()?;
                let s: Sparse = d.read()?;
                let cs: Vec<Color> = d.read_seq()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| {
                    e.write(&s);
                    e.write_seq(&cs);
                    e.write(&c);
                })
            }
            "opStructs" => {
                let p: Point = d.read()?;
                let m: Mixed = d.read()?;
                let n: Nested = d.read()?;
                let ps: Vec<Point> = d.read_seq()?;
                let ms: Vec<Mixed> = d.read_seq()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| {
                    e.write(&p);
                    e.write(&m);
                    e.write_seq(&ps);
                    e.write_seq(&ms);
                    e.write(&n);
                })
            }
            "opOptional" => {
                let _req = d.read_i32()?;
                let i: Option<i32> = d.read_optional_value(2)?;
                let s: Option<String> = d.read_optional_value(3)?;
                let p: Option<Point> = d.read_optional_value(4)?;
                let iseq: Option<Vec<i32>> = d.read_optional_value(5)?;
                let m: Option<Mixed> = d.read_optional_value(6)?;
                let c: Option<Color> = d.read_optional_value(7)?;
                let bb: Option<bool> = d.read_optional_value(40)?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| {
                    e.write_optional(1, i.as_ref());
                    e.write_optional(12, s.as_ref());
                    e.write_optional(13, p.as_ref());
                    e.write_optional(14, iseq.as_ref());
                    e.write_optional(15, m.as_ref());
                    e.write_optional(16, c.as_ref());
                    e.write_optional(41, bb.as_ref());
                })
            }
            "opBase" => {
                let b: Option<ClassRef<Base>> = d.read()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write(&b))
            }
            "opGraph" => {
                let n: Option<ClassRef<Node>> = d.read()?;
                d.finish_encapsulation()?;
                let reply = current.encode_reply(|e| e.write(&n));
                // Break the cycle so the graph is freed.
                if let Some(n) = &n {
                    n.write().next = None;
                }
                reply
            }
            "opPair" => {
                let p: Option<ClassRef<Pair>> = d.read()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write(&p))
            }
            "opWithOpt" => {
                let w: Option<ClassRef<WithOpt>> = d.read()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write(&w))
            }
            "getUnknownClass" => {
                d.finish_encapsulation()?;
                let v = ClassRef::new(SecretDerived {
                    base: Derived {
                        base: Base { a: 7 },
                        s: "known".into(),
                    },
                    secret: "hidden".into(),
                });
                current.encode_reply(|e| {
                    e.set_class_format(ClassFormat::Sliced);
                    e.write(&Some(v));
                })
            }
            "throwErr" => {
                let which = d.read_i32()?;
                d.finish_encapsulation()?;
                match which {
                    1 => {
                        return Err(user_exception(
                            current,
                            ClassFormat::Compact,
                            &base_err("base"),
                        ))
                    }
                    2 => {
                        return Err(user_exception(
                            current,
                            ClassFormat::Compact,
                            &derived_err("derived", 42),
                        ))
                    }
                    _ => current.empty_reply(),
                }
            }
            "throwSliced" => {
                let which = d.read_i32()?;
                d.finish_encapsulation()?;
                match which {
                    1 => {
                        return Err(user_exception(
                            current,
                            ClassFormat::Sliced,
                            &derived_err("sliced", 43),
                        ))
                    }
                    2 => {
                        let ex = SecretErr {
                            base: derived_err("secret", 44),
                            secret: "hidden".into(),
                        };
                        return Err(user_exception(current, ClassFormat::Sliced, &ex));
                    }
                    _ => current.empty_reply(),
                }
            }
            "throwUndeclared" => {
                d.finish_encapsulation()?;
                return Err(user_exception(
                    current,
                    ClassFormat::Compact,
                    &base_err("undeclared"),
                ));
            }
            "throwNonIce" => {
                d.finish_encapsulation()?;
                return Err(DispatchError::unknown("rust error"));
            }
            "opProxy" => {
                let p: Option<ProxyData> = d.read()?;
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write(&p))
            }
            "onewayAdd" => {
                let n = d.read_i32()?;
                d.finish_encapsulation()?;
                self.state.oneway_total.fetch_add(n, Ordering::SeqCst);
                current.empty_reply()
            }
            "getOnewayTotal" => {
                d.finish_encapsulation()?;
                let total = self.state.oneway_total.load(Ordering::SeqCst);
                current.encode_reply(|e| e.write_i32(total))
            }
            "idemDropOnce" | "dropOnce" => {
                d.finish_encapsulation()?;
                let counter = if current.operation == "dropOnce" {
                    &self.state.drop_calls
                } else {
                    &self.state.idem_calls
                };
                let calls = counter.fetch_add(1, Ordering::SeqCst) + 1;
                if calls == 1 {
                    drop_connection(current);
                }
                current.encode_reply(|e| e.write_i32(calls))
            }
            "getContext" => {
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write(&current.ctx))
            }
            "getFacet" => {
                d.finish_encapsulation()?;
                current.encode_reply(|e| e.write_string(&current.facet))
            }
            "reset" => {
                d.finish_encapsulation()?;
                self.state.oneway_total.store(0, Ordering::SeqCst);
                self.state.idem_calls.store(0, Ordering::SeqCst);
                self.state.drop_calls.store(0, Ordering::SeqCst);
                current.empty_reply()
            }
            "shutdown" => {
                d.finish_encapsulation()?;
                if let Ok(c) = current.adapter.communicator() {
                    c.shutdown();
                }
                current.empty_reply()
            }
            _ => return Err(DispatchError::operation_not_exist()),
        };
        Ok(reply.into())
    }
}

async fn sleep_ms(current: Current, params: Encapsulation) -> DispatchResult {
    TestI::check_mode(&current)?;
    let mut d = params_decoder(params)?;
    let ms = d.read_i32()?;
    d.finish_encapsulation()?;
    tokio::time::sleep(Duration::from_millis(ms.max(0) as u64)).await;
    Ok(current.encode_reply(|e| e.write_i32(ms)).into())
}

/// callCallback(name, a, b): calls Callback::add(a, b) on `name` over the
/// incoming connection (bidir).
async fn call_callback(current: Current, params: Encapsulation) -> DispatchResult {
    TestI::check_mode(&current)?;
    let mut d = params_decoder(params)?;
    let name = d.read_string()?;
    let a = d.read_i32()?;
    let b = d.read_i32()?;
    d.finish_encapsulation()?;
    let conn = current
        .connection
        .clone()
        .ok_or_else(|| DispatchError::unknown("callCallback without a connection"))?;
    let communicator = current.adapter.communicator()?;
    let cb = communicator
        .create_proxy(Identity::new(name, ""), vec![])
        .ice_fixed(&conn);
    let args = cb.encode_params(|e: &mut Encoder| {
        e.write_i32(a);
        e.write_i32(b);
    });
    let sum = match cb.invoke("add", OperationMode::Normal, args).await? {
        Response::Ok(encaps) => {
            let mut d = Decoder::from_encapsulation(encaps)?;
            let sum = d.read_i32()?;
            d.finish_encapsulation()?;
            sum
        }
        Response::UserException(_) => {
            return Err(DispatchError::unknown(
                "Callback::add raised a user exception",
            ))
        }
    };
    Ok(current.encode_reply(|e| e.write_i32(sum)).into())
}

impl Servant for TestI {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        match current.operation.as_str() {
            "sleepMs" => Dispatch::future(sleep_ms(current, params)),
            "callCallback" => Dispatch::future(call_callback(current, params)),
            _ => Dispatch::ready(self.dispatch_sync(&current, params)),
        }
    }

    fn ice_id(&self) -> &str {
        "::Interop::Test"
    }

    fn ice_ids(&self) -> &[&str] {
        &["::Ice::Object", "::Interop::Test"]
    }
}

/// The Interop::Callback servant of floe clients (identity "cb"): add(a, b).
pub struct CallbackI {
    /// Calls so far.
    pub calls: AtomicI32,
}

impl Servant for CallbackI {
    fn dispatch(self: Arc<Self>, current: Current, params: Encapsulation) -> Dispatch {
        let result = (|| -> DispatchResult {
            if current.operation != "add" {
                return Err(DispatchError::operation_not_exist());
            }
            let mut d = Decoder::from_encapsulation(params)?;
            let a = d.read_i32()?;
            let b = d.read_i32()?;
            d.finish_encapsulation()?;
            self.calls.fetch_add(1, Ordering::SeqCst);
            Ok(current
                .encode_reply(|e| e.write_i32(a.wrapping_add(b)))
                .into())
        })();
        Dispatch::ready(result)
    }

    fn ice_id(&self) -> &str {
        "::Interop::Callback"
    }

    fn ice_ids(&self) -> &[&str] {
        &["::Ice::Object", "::Interop::Callback"]
    }
}
