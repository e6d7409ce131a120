//! The floe client driver of the interop suite: the checks of py_client.py,
//! with the same names and meaning, written over floe-runtime's untyped
//! `Proxy::invoke` with hand-encoded parameters (what generated code will do).
//! Prints `PASS`/`FAIL` lines like the other clients and returns a
//! [`ClientReport`].
#![allow(dead_code)]

use std::os::unix::process::ExitStatusExt;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use floe_runtime::{
    Communicator, Context, Error, Identity, OperationMode, Properties, Proxy, Response,
};
use floe_testkit::interop::CHECKS;
use floe_testkit::ClientReport;
use floe_wire::class::ClassRef;
use floe_wire::{Decoder, Encoder, ParseDefaults, ProxyData, ToStringMode, UserException};

use super::classes::*;
use super::floe_server::CallbackI;
use super::types::*;

type Check = Result<(), String>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)+) => {
        if !($cond as bool) {
            return Err(format!($($fmt)+));
        }
    };
}

fn eq<T: PartialEq + std::fmt::Debug>(got: T, want: T, what: &str) -> Check {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}"))
    }
}

/// A failed invocation, as the checks see it.
enum Failure {
    /// Status 1, decoded with the client's known exceptions.
    User(Box<dyn UserException>),
    /// Status 1 with no known slice.
    UnknownUser(String),
    /// A local or reply-status error.
    Local(Error),
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::User(e) => write!(f, "user exception {}", e.ice_id()),
            Failure::UnknownUser(id) => write!(f, "UnknownUserException({id})"),
            Failure::Local(e) => write!(f, "{e:?}"),
        }
    }
}

/// The driver's state: the client communicator and the "test" proxy.
pub struct Driver {
    comm: Communicator,
    test: Proxy,
    endpoint: String,
    proxy_options: String,
}

impl Driver {
    fn prx(&self, text: &str) -> Proxy {
        self.comm
            .string_to_proxy(text)
            .unwrap_or_else(|e| panic!("string_to_proxy({text}): {e}"))
    }

    /// Invokes `op` on `proxy` and returns a decoder over the results, or the failure.
    async fn call_on(
        &self,
        proxy: &Proxy,
        op: &str,
        mode: OperationMode,
        ctx: Option<&Context>,
        write: impl FnOnce(&mut Encoder),
    ) -> Result<Decoder, Failure> {
        let params = proxy.encode_params(write);
        let response = proxy
            .invoke_with_context(op, mode, params, ctx)
            .await
            .map_err(Failure::Local)?;
        match response {
            Response::Ok(encaps) => {
                let mut d =
                    Decoder::from_encapsulation(encaps).map_err(|e| Failure::Local(e.into()))?;
                d.set_value_factories(client_value_factories());
                d.set_accept_class_cycles(true);
                Ok(d)
            }
            Response::UserException(encaps) => {
                let mut d =
                    Decoder::from_encapsulation(encaps).map_err(|e| Failure::Local(e.into()))?;
                match d.read_user_exception(&client_exceptions()) {
                    Ok(ex) => Err(Failure::User(ex)),
                    Err(floe_wire::Error::UnknownUserException { type_id }) => {
                        Err(Failure::UnknownUser(type_id))
                    }
                    Err(e) => Err(Failure::Local(e.into())),
                }
            }
        }
    }

    async fn call(&self, op: &str, write: impl FnOnce(&mut Encoder)) -> Result<Decoder, String> {
        self.call_on(&self.test, op, OperationMode::Normal, None, write)
            .await
            .map_err(|f| format!("{op}: {f:?}"))
    }

    async fn call_i32(&self, op: &str) -> Result<i32, String> {
        let mut d = self.call(op, |_| {}).await?;
        let v = d.read_i32().map_err(|e| e.to_string())?;
        done(&mut d)?;
        Ok(v)
    }

    async fn wait_total(&self, want: i32) -> Check {
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut total = self.call_i32("getOnewayTotal").await?;
        while total != want && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
            total = self.call_i32("getOnewayTotal").await?;
        }
        eq(total, want, "oneway total")
    }
}

/// Requires the results to be fully read.
fn done(d: &mut Decoder) -> Check {
    d.finish_encapsulation()
        .map_err(|e| format!("trailing results: {e}"))
}

fn w<T>(r: floe_wire::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("decode: {e}"))
}

fn write_prims(e: &mut Encoder, p: &Prims) {
    e.write_bool(p.b);
    e.write_u8(p.y);
    e.write_i16(p.s);
    e.write_i32(p.i);
    e.write_i64(p.l);
    e.write_f32(p.f);
    e.write_f64(p.d);
    e.write_string(&p.st);
}

#[derive(Clone, Debug, PartialEq)]
struct Prims {
    b: bool,
    y: u8,
    s: i16,
    i: i32,
    l: i64,
    f: f32,
    d: f64,
    st: String,
}

async fn op_prims(d: &Driver, p: Prims) -> Check {
    let mut r = d.call("opPrims", |e| write_prims(e, &p)).await?;
    let got = Prims {
        b: w(r.read_bool())?,
        y: w(r.read_u8())?,
        s: w(r.read_i16())?,
        i: w(r.read_i32())?,
        l: w(r.read_i64())?,
        f: w(r.read_f32())?,
        d: w(r.read_f64())?,
        st: w(r.read_string())?,
    };
    done(&mut r)?;
    eq(got, p, "opPrims")
}

fn expect_user<'a>(
    r: &'a Result<Decoder, Failure>,
    what: &str,
) -> Result<&'a dyn UserException, String> {
    match r {
        Err(Failure::User(ex)) => Ok(&**ex),
        Err(f) => Err(format!("{what}: expected a user exception, got {f:?}")),
        Ok(_) => Err(format!("{what}: expected a user exception, got a result")),
    }
}

fn expect_local<'a>(r: &'a Result<Decoder, Failure>, what: &str) -> Result<&'a Error, String> {
    match r {
        Err(Failure::Local(e)) => Ok(e),
        Err(f) => Err(format!("{what}: expected a local exception, got {f:?}")),
        Ok(_) => Err(format!("{what}: expected an exception, got a result")),
    }
}

/// Parses `text` as Ice would with `Ice.Default.EncodingVersion` = 1.0 when the
/// driver's proxies use ` -e 1.0` (proxies read from a 1.0 stream are 1.0 too).
fn proxy_data(d: &Driver, text: &str) -> Result<ProxyData, String> {
    let mut defaults = ParseDefaults::default();
    if d.proxy_options.contains("-e 1.0") {
        defaults.encoding = floe_wire::ENCODING_1_0;
    }
    floe_wire::string_to_proxy(text, &defaults)
        .map_err(|e| format!("parse {text}: {e}"))?
        .ok_or_else(|| format!("{text} is a null proxy"))
}

/// Runs one named check.
async fn run_check(d: &Driver, name: &str) -> Check {
    let test = &d.test;
    match name {
        "ping" => test.ice_ping().await.map_err(|e| format!("{e:?}")),
        "is_a" => {
            ensure!(
                test.ice_is_a("::Interop::Test")
                    .await
                    .map_err(|e| format!("{e:?}"))?,
                "ice_isA(::Interop::Test) is false"
            );
            ensure!(
                !test
                    .ice_is_a("::Interop::Callback")
                    .await
                    .map_err(|e| format!("{e:?}"))?,
                "ice_isA(::Interop::Callback) is true"
            );
            Ok(())
        }
        "ids" => {
            eq(
                test.ice_ids().await.map_err(|e| format!("{e:?}"))?,
                vec!["::Ice::Object".to_string(), "::Interop::Test".to_string()],
                "ice_ids",
            )?;
            eq(
                test.ice_id().await.map_err(|e| format!("{e:?}"))?,
                "::Interop::Test".to_string(),
                "ice_id",
            )
        }
        "prims" => {
            op_prims(
                d,
                Prims {
                    b: true,
                    y: 200,
                    s: -2,
                    i: 0x0102_0304,
                    l: -1_234_567_890_123,
                    f: 1.5,
                    d: -2.25,
                    st: "h\u{e9}llo \u{20ac}".into(),
                },
            )
            .await
        }
        "prims_extremes" => {
            let big = "x".repeat(300) + "\u{1F600}";
            op_prims(
                d,
                Prims {
                    b: false,
                    y: 0,
                    s: i16::MIN,
                    i: i32::MIN,
                    l: i64::MIN,
                    f: -f32::MAX,
                    d: 1e308,
                    st: big,
                },
            )
            .await?;
            op_prims(
                d,
                Prims {
                    b: true,
                    y: 255,
                    s: i16::MAX,
                    i: i32::MAX,
                    l: i64::MAX,
                    f: f32::MAX,
                    d: -1e-300,
                    st: String::new(),
                },
            )
            .await
        }
        "byte_seq" => {
            for (what, data) in [
                ("empty", Vec::new()),
                ("small", vec![1u8, 2, 3]),
                (
                    "500000 bytes",
                    (0..500_000usize)
                        .map(|i| ((i * 31 + 7) % 256) as u8)
                        .collect(),
                ),
            ] {
                let mut r = d.call("opByteSeq", |e| e.write_byte_seq(&data)).await?;
                let got = w(r.read_byte_seq())?;
                done(&mut r)?;
                ensure!(
                    got[..] == data[..],
                    "{what}: echo differs ({} bytes back)",
                    got.len()
                );
            }
            Ok(())
        }
        "seqs" => {
            let v = sample_seqs();
            let mut r = d.call("opSeqs", |e| e.write(&v)).await?;
            let got: Seqs = w(r.read())?;
            done(&mut r)?;
            eq(got, v, "opSeqs")
        }
        "dicts" => {
            let a: StringIntDict = [("one", 1), ("two", 2), ("neg", -3)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            let b: IntStringDict = [(1, "a"), (-7, "b")]
                .into_iter()
                .map(|(k, v)| (k, v.to_string()))
                .collect();
            let c: StringMixedDict = [
                ("m".to_string(), Mixed::new("n", 0.5, true, &[1, 2])),
                ("e".to_string(), Mixed::new("", 0.0, false, &[])),
            ]
            .into_iter()
            .collect();
            let mut r = d
                .call("opDicts", |e| {
                    e.write(&a);
                    e.write(&b);
                    e.write(&c);
                })
                .await?;
            let ob: IntStringDict = w(r.read())?;
            let oc: StringMixedDict = w(r.read())?;
            let ra: StringIntDict = w(r.read())?;
            done(&mut r)?;
            eq(ra, a, "return")?;
            eq(ob, b, "ob")?;
            eq(oc, c, "oc")
        }
        "enums" => {
            for (c, s, cs) in [
                (
                    Color::Blue,
                    Sparse::C,
                    vec![Color::Red, Color::Green, Color::Blue],
                ),
                (Color::Red, Sparse::A, vec![]),
            ] {
                let mut r = d
                    .call("opEnums", |e| {
                        e.write(&c);
                        e.write(&s);
                        e.write_seq(&cs);
                    })
                    .await?;
                let os: Sparse = w(r.read())?;
                let ocs: Vec<Color> = w(r.read_seq())?;
                let rc: Color = w(r.read())?;
                done(&mut r)?;
                eq((rc, os, ocs), (c, s, cs), "opEnums")?;
            }
            Ok(())
        }
        "structs" => {
            let p = Point { x: 1, y: -2 };
            let m = Mixed::new("mix", 2.5, true, &[1, 2, 3]);
            let n = Nested {
                p: Point { x: 3, y: 4 },
                m: Mixed::new("inner", -0.5, false, &[]),
                d: [("k".to_string(), 1)].into_iter().collect(),
                c: Color::Green,
                ps: vec![Point { x: 5, y: 6 }, Point { x: 7, y: 8 }],
            };
            let ps = vec![
                Point { x: 1, y: 2 },
                Point { x: 3, y: 4 },
                Point { x: -5, y: 6 },
            ];
            let ms = vec![
                Mixed::new("a", 1.0, false, &[9]),
                Mixed::new("", 0.0, true, &[]),
            ];
            let mut r = d
                .call("opStructs", |e| {
                    e.write(&p);
                    e.write(&m);
                    e.write(&n);
                    e.write_seq(&ps);
                    e.write_seq(&ms);
                })
                .await?;
            let op: Point = w(r.read())?;
            let om: Mixed = w(r.read())?;
            let ops: Vec<Point> = w(r.read_seq())?;
            let oms: Vec<Mixed> = w(r.read_seq())?;
            let rn: Nested = w(r.read())?;
            done(&mut r)?;
            eq(rn, n, "return")?;
            eq(op, p, "op")?;
            eq(om, m, "om")?;
            eq(ops, ps, "ops")?;
            eq(oms, ms, "oms")
        }
        "optionals_set" => {
            let m = Mixed::new("o", 1.0, true, &[4]);
            let got = op_optional(
                d,
                1,
                OptArgs {
                    i: Some(5),
                    s: Some("s".into()),
                    p: Some(Point { x: 1, y: 2 }),
                    iseq: Some(vec![1, 2, 3]),
                    m: Some(m.clone()),
                    c: Some(Color::Blue),
                    bb: Some(true),
                },
            )
            .await?;
            eq(
                got,
                OptArgs {
                    i: Some(5),
                    s: Some("s".into()),
                    p: Some(Point { x: 1, y: 2 }),
                    iseq: Some(vec![1, 2, 3]),
                    m: Some(m),
                    c: Some(Color::Blue),
                    bb: Some(true),
                },
                "opOptional",
            )
        }
        "optionals_unset" => {
            eq(
                op_optional(d, 0, OptArgs::default()).await?,
                OptArgs::default(),
                "all unset",
            )?;
            let partial = OptArgs {
                i: Some(9),
                bb: Some(false),
                ..OptArgs::default()
            };
            eq(
                op_optional(d, 2, partial.clone()).await?,
                partial,
                "partial",
            )
        }
        "class_base" => {
            let mut r = d
                .call("opBase", |e| e.write(&Some(ClassRef::new(Base { a: 5 }))))
                .await?;
            let b: Option<ClassRef<Base>> = w(r.read())?;
            done(&mut r)?;
            let b = b.ok_or("null")?;
            eq(b.ice_id(), "::Interop::Base", "type")?;
            let a = b.read().a;
            eq(a, 5, "a")
        }
        "class_derived" => {
            let v = ClassRef::new(Derived {
                base: Base { a: 6 },
                s: "d".into(),
            });
            let mut r = d.call("opBase", |e| e.write(&Some(v))).await?;
            let b: Option<ClassRef<Base>> = w(r.read())?;
            done(&mut r)?;
            let derived = b
                .ok_or("null")?
                .downcast::<Derived>()
                .ok_or("not a Derived")?;
            let g = derived.read();
            eq((g.base.a, g.s.as_str()), (6, "d"), "members")
        }
        "class_null" => {
            let mut r = d
                .call("opBase", |e| e.write(&None::<ClassRef<Base>>))
                .await?;
            let b: Option<ClassRef<Base>> = w(r.read())?;
            done(&mut r)?;
            ensure!(b.is_none(), "null class did not come back null");
            Ok(())
        }
        "class_graph_cycle" => {
            let n1 = ClassRef::new(Node { v: 1, next: None });
            let n2 = ClassRef::new(Node {
                v: 2,
                next: Some(n1.clone()),
            });
            n1.write().next = Some(n2.clone());
            let result = d.call("opGraph", |e| e.write(&Some(n1.clone()))).await;
            n1.write().next = None; // break our cycle
            let mut r = result?;
            let got: Option<ClassRef<Node>> = w(r.read())?;
            done(&mut r)?;
            let r1 = got.ok_or("null")?;
            let r2 = r1.read().next.clone().ok_or("missing second node")?;
            let back = r2.read().next.clone().ok_or("missing back reference")?;
            let values = (r1.read().v, r2.read().v);
            let cyclic = ClassRef::ptr_eq(&back, &r1);
            r2.write().next = None; // break the received cycle
            eq(values, (1, 2), "values")?;
            ensure!(cyclic, "cycle not preserved");
            Ok(())
        }
        "class_shared" => {
            let b = ClassRef::new(Base { a: 9 });
            let pair = ClassRef::new(Pair {
                x: Some(b.clone()),
                y: Some(b),
            });
            let mut r = d.call("opPair", |e| e.write(&Some(pair))).await?;
            let got: Option<ClassRef<Pair>> = w(r.read())?;
            done(&mut r)?;
            let got = got.ok_or("null")?;
            let (x, y) = (
                got.read().x.clone().ok_or("null x")?,
                got.read().y.clone().ok_or("null y")?,
            );
            ensure!(
                ClassRef::ptr_eq(&x, &y),
                "shared instance came back as two instances"
            );
            eq(x.read().a, 9, "x.a")?;
            let pair = ClassRef::new(Pair {
                x: Some(ClassRef::new(Base { a: 1 })),
                y: Some(
                    ClassRef::new(Derived {
                        base: Base { a: 2 },
                        s: "z".into(),
                    })
                    .downcast::<Base>()
                    .ok_or("upcast")?,
                ),
            });
            let mut r = d.call("opPair", |e| e.write(&Some(pair))).await?;
            let got: Option<ClassRef<Pair>> = w(r.read())?;
            done(&mut r)?;
            let got = got.ok_or("null")?;
            let x = got.read().x.clone().ok_or("null x")?;
            let y = got
                .read()
                .y
                .clone()
                .ok_or("null y")?
                .downcast::<Derived>()
                .ok_or("y type")?;
            let (ya, ys) = (y.read().base.a, y.read().s.clone());
            let xa = x.read().a;
            eq((xa, ya, ys.as_str()), (1, 2, "z"), "members")
        }
        "class_optional_members" => {
            for (a, b, s) in [(1, Some(2), Some("z".to_string())), (3, None, None)] {
                let v = ClassRef::new(WithOpt { a, b, s: s.clone() });
                let mut r = d.call("opWithOpt", |e| e.write(&Some(v))).await?;
                let got: Option<ClassRef<WithOpt>> = w(r.read())?;
                done(&mut r)?;
                let got = got.ok_or("null")?;
                let g = got.read();
                eq((g.a, g.b, g.s.clone()), (a, b, s), "members")?;
            }
            Ok(())
        }
        "class_unknown_sliced" => {
            let mut r = d.call("getUnknownClass", |_| {}).await?;
            let got: Option<ClassRef<Base>> = w(r.read())?;
            done(&mut r)?;
            let got = got.ok_or("null")?;
            eq(got.ice_id(), "::Interop::Derived", "type")?;
            let derived = got.downcast::<Derived>().ok_or("not a Derived")?;
            let g = derived.read();
            eq((g.base.a, g.s.as_str()), (7, "known"), "members")
        }
        "exc_base" => {
            let r = d
                .call_on(test, "throwErr", OperationMode::Normal, None, |e| {
                    e.write_i32(1)
                })
                .await;
            let ex = expect_user(&r, "throwErr(1)")?;
            eq(ex.ice_id(), "::Interop::BaseErr", "type")?;
            eq(
                ex.downcast_ref::<BaseErr>()
                    .ok_or("not a BaseErr")?
                    .reason
                    .as_str(),
                "base",
                "reason",
            )
        }
        "exc_derived" => {
            let r = d
                .call_on(test, "throwErr", OperationMode::Normal, None, |e| {
                    e.write_i32(2)
                })
                .await;
            let ex = expect_user(&r, "throwErr(2)")?;
            let de = ex
                .downcast_ref::<DerivedErr>()
                .ok_or_else(|| format!("not a DerivedErr: {}", ex.ice_id()))?;
            eq(
                (de.base.reason.as_str(), de.code),
                ("derived", 42),
                "members",
            )
        }
        "exc_none" => {
            let mut r = d.call("throwErr", |e| e.write_i32(0)).await?;
            done(&mut r)
        }
        "exc_sliced_known" | "exc_sliced_unknown" => {
            let (which, reason, code) = if name == "exc_sliced_known" {
                (1, "sliced", 43)
            } else {
                (2, "secret", 44)
            };
            let r = d
                .call_on(test, "throwSliced", OperationMode::Normal, None, |e| {
                    e.write_i32(which)
                })
                .await;
            let ex = expect_user(&r, "throwSliced")?;
            eq(ex.ice_id(), "::Interop::DerivedErr", "type")?;
            let de = ex.downcast_ref::<DerivedErr>().ok_or("not a DerivedErr")?;
            eq(
                (de.base.reason.as_str(), de.code),
                (reason, code),
                "members",
            )
        }
        "exc_undeclared" => {
            // throwUndeclared declares no exceptions: whatever comes back is
            // unknown. The client knows the type (as an Ice client knows every
            // exception linked into it), so it decodes it, then reports it.
            let params = test.empty_params();
            match test
                .invoke("throwUndeclared", OperationMode::Normal, params)
                .await
            {
                Ok(Response::UserException(encaps)) => {
                    let mut dec = Decoder::from_encapsulation(encaps).map_err(|e| e.to_string())?;
                    let known = client_exceptions();
                    match floe_runtime::user_exception_error(&mut dec, &known, &[]) {
                        Error::UnknownUserException(type_id) => {
                            ensure!(type_id.contains("Interop::BaseErr"), "unknown = {type_id}");
                            Ok(())
                        }
                        other => Err(format!("expected UnknownUserException, got {other:?}")),
                    }
                }
                other => Err(format!("expected a user exception reply, got {other:?}")),
            }
        }
        "exc_non_ice" => {
            let r = d
                .call_on(test, "throwNonIce", OperationMode::Normal, None, |_| {})
                .await;
            match expect_local(&r, "throwNonIce")? {
                Error::UnknownException(_) => Ok(()),
                e => Err(format!("expected UnknownException, got {e:?}")),
            }
        }
        "object_not_exist" => {
            let missing = d.prx(&format!("missing{}:{}", d.proxy_options, d.endpoint));
            match missing.ice_ping().await {
                Err(Error::ObjectNotExist(f)) => eq(f.identity.name.as_str(), "missing", "id")?,
                other => return Err(format!("ice_ping: expected ObjectNotExist, got {other:?}")),
            }
            let r = d
                .call_on(&missing, "getFacet", OperationMode::Normal, None, |_| {})
                .await;
            match expect_local(&r, "getFacet")? {
                Error::ObjectNotExist(_) => Ok(()),
                e => Err(format!("getFacet: expected ObjectNotExist, got {e:?}")),
            }
        }
        "facet_not_exist" => match test.ice_facet("nope").ice_ping().await {
            Err(Error::FacetNotExist(_)) => Ok(()),
            other => Err(format!("expected FacetNotExist, got {other:?}")),
        },
        "operation_not_exist" => {
            let r = d
                .call_on(test, "missing", OperationMode::Normal, None, |_| {})
                .await;
            match expect_local(&r, "missing")? {
                Error::OperationNotExist(f) => eq(f.operation.as_str(), "missing", "operation"),
                e => Err(format!("expected OperationNotExist, got {e:?}")),
            }
        }
        "proxy_param" => {
            let p = proxy_data(d, "cat/id -f fac -o:tcp -h 127.0.0.1 -p 12345 -t 500")?;
            let mut r = d.call("opProxy", |e| e.write(&Some(p.clone()))).await?;
            let got: Option<ProxyData> = w(r.read())?;
            done(&mut r)?;
            let got = got.ok_or("null")?;
            eq(
                floe_wire::proxy_to_string(&got, ToStringMode::Unicode),
                floe_wire::proxy_to_string(&p, ToStringMode::Unicode),
                "proxy",
            )?;
            let mut r = d.call("opProxy", |e| e.write(&None::<ProxyData>)).await?;
            let got: Option<ProxyData> = w(r.read())?;
            done(&mut r)?;
            ensure!(got.is_none(), "null proxy did not come back null");
            // Send our own proxy (runtime Proxy -> text -> ProxyData) and call through
            // the one that comes back (ProxyData -> text -> runtime Proxy).
            let mine = proxy_data(d, &test.ice_facet("facetA").to_string())?;
            let mut r = d.call("opProxy", |e| e.write(&Some(mine))).await?;
            let back: Option<ProxyData> = w(r.read())?;
            done(&mut r)?;
            let back = d.prx(&floe_wire::proxy_to_string(
                &back.ok_or("null")?,
                ToStringMode::Unicode,
            ));
            let mut r = d
                .call_on(&back, "getFacet", OperationMode::Normal, None, |_| {})
                .await
                .map_err(|f| format!("call through returned proxy: {f:?}"))?;
            eq(
                w(r.read_string())?.as_str(),
                "facetA",
                "call through returned proxy",
            )
        }
        "facets" => {
            let mut r = d.call("getFacet", |_| {}).await?;
            eq(w(r.read_string())?.as_str(), "", "default facet")?;
            let fa = test.ice_facet("facetA");
            let mut r = d
                .call_on(&fa, "getFacet", OperationMode::Normal, None, |_| {})
                .await
                .map_err(|f| format!("{f:?}"))?;
            eq(w(r.read_string())?.as_str(), "facetA", "facetA")
        }
        "context" => {
            let get = |p: Proxy, ctx: Option<Context>| async move {
                let mut r = d
                    .call_on(
                        &p,
                        "getContext",
                        OperationMode::Normal,
                        ctx.as_ref(),
                        |_| {},
                    )
                    .await
                    .map_err(|f| format!("{f:?}"))?;
                w(r.read::<Context>())
            };
            eq(get(test.clone(), None).await?, Context::new(), "empty")?;
            let ctx: Context = [("a", "b"), ("k", "v")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            eq(get(test.clone(), Some(ctx.clone())).await?, ctx, "per call")?;
            let pctx: Context = [("p".to_string(), "q".to_string())].into_iter().collect();
            eq(
                get(test.ice_context(pctx.clone()), None).await?,
                pctx,
                "proxy context",
            )
        }
        "oneway" => {
            d.call("reset", |_| {}).await?;
            let ow = test.ice_oneway();
            for n in 1..=5 {
                d.call_on(&ow, "onewayAdd", OperationMode::Normal, None, |e| {
                    e.write_i32(n)
                })
                .await
                .map_err(|f| format!("oneway onewayAdd: {f:?}"))?;
            }
            d.wait_total(15).await
        }
        "batch_oneway" => {
            d.call("reset", |_| {}).await?;
            let b = test.ice_batch_oneway();
            for n in [10, 20] {
                d.call_on(&b, "onewayAdd", OperationMode::Normal, None, |e| {
                    e.write_i32(n)
                })
                .await
                .map_err(|f| format!("batch onewayAdd: {f:?}"))?;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
            eq(d.call_i32("getOnewayTotal").await?, 0, "total before flush")?;
            b.ice_flush_batch_requests()
                .await
                .map_err(|e| format!("flush: {e:?}"))?;
            d.wait_total(30).await
        }
        "compress" => {
            let z = test.ice_compress(true);
            for data in [
                (0..100_000usize)
                    .map(|i| (i % 7) as u8)
                    .collect::<Vec<u8>>(),
                b"ab".to_vec(),
            ] {
                let mut r = d
                    .call_on(&z, "opByteSeq", OperationMode::Normal, None, |e| {
                        e.write_byte_seq(&data)
                    })
                    .await
                    .map_err(|f| format!("{f:?}"))?;
                let got = w(r.read_byte_seq())?;
                ensure!(
                    got[..] == data[..],
                    "compressed echo of {} bytes differs",
                    data.len()
                );
            }
            Ok(())
        }
        "idempotent_retry" => {
            d.call("reset", |_| {}).await?;
            let mut r = d
                .call_on(
                    test,
                    "idemDropOnce",
                    OperationMode::Idempotent,
                    None,
                    |_| {},
                )
                .await
                .map_err(|f| format!("idemDropOnce: {f:?}"))?;
            eq(w(r.read_i32())?, 2, "idemDropOnce")
        }
        "normal_no_retry" => {
            d.call("reset", |_| {}).await?;
            let r = d
                .call_on(test, "dropOnce", OperationMode::Normal, None, |_| {})
                .await;
            match expect_local(&r, "first dropOnce")? {
                Error::ConnectionLost(_) => {}
                e => return Err(format!("expected ConnectionLost, got {e:?}")),
            }
            eq(d.call_i32("dropOnce").await?, 2, "second dropOnce")
        }
        "concurrency" => {
            // The previous check dropped the connection: connect first, so
            // that the clock measures dispatch, not a (TLS) handshake.
            test.ice_ping().await.map_err(|e| format!("{e:?}"))?;
            let start = Instant::now();
            let calls: Vec<_> = (0..4)
                .map(|_| {
                    let p = test.clone();
                    tokio::spawn(async move {
                        let params = p.encode_params(|e| e.write_i32(500));
                        p.invoke("sleepMs", OperationMode::Normal, params).await
                    })
                })
                .collect();
            for c in calls {
                match c.await.map_err(|e| e.to_string())? {
                    Ok(Response::Ok(encaps)) => {
                        let mut r = w(Decoder::from_encapsulation(encaps))?;
                        eq(w(r.read_i32())?, 500, "result")?;
                    }
                    other => return Err(format!("sleepMs: {other:?}")),
                }
            }
            let elapsed = start.elapsed().as_secs_f64();
            ensure!(
                elapsed < 1.5,
                "4 x sleepMs(500) took {elapsed:.2}s: not dispatched concurrently"
            );
            Ok(())
        }
        "bidir" => {
            let adapter = d
                .comm
                .create_object_adapter_with_endpoints("", "")
                .await
                .map_err(|e| format!("create endpoint-less adapter: {e:?}"))?;
            let cb = Arc::new(CallbackI {
                calls: AtomicI32::new(0),
            });
            adapter
                .add(Identity::from_name("cb"), cb.clone())
                .map_err(|e| format!("add cb: {e:?}"))?;
            adapter.activate();
            let conn = test
                .ice_get_connection()
                .await
                .map_err(|e| format!("connection: {e:?}"))?;
            conn.set_adapter(Some(adapter));
            let mut r = d
                .call("callCallback", |e| {
                    e.write_string("cb");
                    e.write_i32(3);
                    e.write_i32(4);
                })
                .await?;
            eq(w(r.read_i32())?, 7, "callCallback")?;
            eq(cb.calls.load(Ordering::SeqCst), 1, "callback calls")
        }
        // Extra checks, run only when named: with client ACM (Timeout=1, Close=3,
        // no heartbeats) a 2.5 s call survives only if the server heartbeats.
        "long_call" => {
            let mut r = d.call("sleepMs", |e| e.write_i32(2500)).await?;
            eq(w(r.read_i32())?, 2500, "sleepMs(2500)")
        }
        // With a server that drops idle connections after 1 s (ACM Close=4), the
        // client's heartbeats (ACM Heartbeat=3) keep its connection across 2.5 s.
        "acm_idle_heartbeat" => {
            let before = test
                .ice_get_connection()
                .await
                .map_err(|e| format!("{e:?}"))?;
            test.ice_ping().await.map_err(|e| format!("{e:?}"))?;
            tokio::time::sleep(Duration::from_millis(2500)).await;
            test.ice_ping().await.map_err(|e| format!("{e:?}"))?;
            let after = test
                .ice_get_connection()
                .await
                .map_err(|e| format!("{e:?}"))?;
            ensure!(
                before.ptr_eq(&after) && after.is_active(),
                "the server dropped the idle connection: {:?}",
                before.end_error()
            );
            Ok(())
        }
        // Against a server that closes idle connections gracefully after 1 s
        // (ACM Close=1), the next call opens a new connection and succeeds.
        "idle_close_reconnect" => {
            let before = test
                .ice_get_connection()
                .await
                .map_err(|e| format!("{e:?}"))?;
            test.ice_ping().await.map_err(|e| format!("{e:?}"))?;
            tokio::time::sleep(Duration::from_millis(2500)).await;
            test.ice_ping()
                .await
                .map_err(|e| format!("ping after the idle close: {e:?}"))?;
            let after = test
                .ice_get_connection()
                .await
                .map_err(|e| format!("{e:?}"))?;
            ensure!(
                !before.ptr_eq(&after),
                "expected a new connection after the server's idle close"
            );
            Ok(())
        }
        other => Err(format!("no such check {other}")),
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
struct OptArgs {
    i: Option<i32>,
    s: Option<String>,
    p: Option<Point>,
    iseq: Option<Vec<i32>>,
    m: Option<Mixed>,
    c: Option<Color>,
    bb: Option<bool>,
}

async fn op_optional(d: &Driver, req: i32, a: OptArgs) -> Result<OptArgs, String> {
    let mut r = d
        .call("opOptional", |e| {
            e.write_i32(req);
            e.write_optional(2, a.i.as_ref());
            e.write_optional(3, a.s.as_ref());
            e.write_optional(4, a.p.as_ref());
            e.write_optional(5, a.iseq.as_ref());
            e.write_optional(6, a.m.as_ref());
            e.write_optional(7, a.c.as_ref());
            e.write_optional(40, a.bb.as_ref());
        })
        .await?;
    let got = OptArgs {
        i: w(r.read_optional_value(1))?,
        s: w(r.read_optional_value(12))?,
        p: w(r.read_optional_value(13))?,
        iseq: w(r.read_optional_value(14))?,
        m: w(r.read_optional_value(15))?,
        c: w(r.read_optional_value(16))?,
        bb: w(r.read_optional_value(41))?,
    };
    done(&mut r)?;
    Ok(got)
}

/// Runs the checks (all of [`CHECKS`], or `only`) against `test:<endpoint>` with a
/// fresh floe communicator, printing `PASS`/`FAIL` lines as `name`.
pub async fn run_floe_client(
    name: &str,
    endpoint: &str,
    props: Properties,
    only: Option<&[&str]>,
) -> ClientReport {
    run_floe_client_with_options(name, endpoint, "", props, only).await
}

/// [`run_floe_client`] with proxy options (e.g. ` -e 1.0`) inserted after the
/// identity of the proxies the checks build from text.
pub async fn run_floe_client_with_options(
    name: &str,
    endpoint: &str,
    proxy_options: &str,
    props: Properties,
    only: Option<&[&str]>,
) -> ClientReport {
    let comm = Communicator::with_properties(props);
    let test = comm
        .string_to_proxy(&format!("test{proxy_options}:{endpoint}"))
        .unwrap_or_else(|e| panic!("floe client: bad endpoint {endpoint}: {e}"));
    let driver = Driver {
        comm: comm.clone(),
        test,
        endpoint: endpoint.to_owned(),
        proxy_options: proxy_options.to_owned(),
    };
    let mut lines = Vec::new();
    let (mut passed, mut failed) = (0, 0);
    for check in only.unwrap_or(CHECKS) {
        // Each check gets a deadline so that a hung call cannot stall the suite.
        let outcome = tokio::time::timeout(Duration::from_secs(30), run_check(&driver, check))
            .await
            .unwrap_or_else(|_| Err("timed out after 30 s".into()));
        let line = match outcome {
            Ok(()) => {
                passed += 1;
                format!("PASS {check}")
            }
            Err(detail) => {
                failed += 1;
                format!("FAIL {check}: {}", detail.replace('\n', " | "))
            }
        };
        println!("{name}: {line}");
        lines.push(line);
    }
    lines.push(format!("SUMMARY {passed} passed, {failed} failed"));
    comm.destroy().await;
    let output = lines.join("\n");
    let status = std::process::ExitStatus::from_raw(if failed == 0 { 0 } else { 256 });
    ClientReport::parse(name, &lines, Some(status), output)
}
