//! The floe client of the conformance suite: the checks of
//! `peers/client.py` and `peers/client.cpp`, with the same names, written
//! against the typed proxies generated from `Conformance.ice` alone (the
//! client's view: no server-only type).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::{Duration, Instant};

use floe::codegen::{ClassRef, UserError, UserException, ValuePtr};
use floe::runtime::{Communicator, Error, Properties};
use floe::wire::class::UnknownSlicedValue;
use floe::wire::{ENCODING_1_0, ENCODING_1_1};
use floe_conformance::client_gen::conf::*;

use super::Report;

#[path = "floe_client_api.rs"]
mod api;

/// A failed check's detail.
#[derive(Debug)]
pub struct Fail(String);

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        Fail(format!(
            "unexpected {}: {}",
            e.ice_name(),
            e.to_string().replace('\n', " ")
        ))
    }
}

type R = Result<(), Fail>;
type Shared<T> = Option<ClassRef<T>>;
type UserResult = floe::runtime::Result<()>;

macro_rules! ensure {
    ($cond:expr, $($fmt:tt)*) => {
        if !$cond {
            return Err(Fail(format!($($fmt)*)));
        }
    };
}

fn eq<T: PartialEq + Debug>(got: T, want: T, what: &str) -> R {
    ensure!(got == want, "{what}: got {got:?}, want {want:?}");
    Ok(())
}

/// Ice's exceptions derived from `MarshalException`.
const MARSHAL_FAMILY: &[&str] = &[
    "::Ice::MarshalException",
    "::Ice::NoValueFactoryException",
    "::Ice::UnmarshalOutOfBoundsException",
    "::Ice::UnexpectedObjectException",
    "::Ice::ProxyUnmarshalException",
    "::Ice::MemoryLimitException",
    "::Ice::EncapsulationException",
];

/// Whether an error named `name` is caught as `want`, as in Ice's
/// exception hierarchy.
fn caught_as(name: &str, want: &str) -> bool {
    name == want || (want == "::Ice::MarshalException" && MARSHAL_FAMILY.contains(&name))
}

/// `r` must have failed with the Ice exception `want` (or one derived from it).
fn raises<T: Debug>(r: floe::runtime::Result<T>, want: &str) -> Result<Error, Fail> {
    match r {
        Err(e) if caught_as(e.ice_name(), want) => Ok(e),
        Err(e) => Err(Fail(format!(
            "expected {want}, got {}: {}",
            e.ice_name(),
            e.to_string().replace('\n', " ")
        ))),
        Ok(v) => Err(Fail(format!("expected {want}, got {v:?}"))),
    }
}

/// `r` must have raised a declared user exception: it.
fn user_error(r: UserResult) -> Result<UserError, Fail> {
    match r {
        Err(Error::UserException(e)) => Ok(e),
        Err(e) => Err(e.into()),
        Ok(()) => Err(Fail("no user exception".into())),
    }
}

/// `r` must have raised the user exception `T` exactly.
fn user_error_as<T: UserException + Clone>(r: UserResult) -> Result<T, Fail> {
    let e = user_error(r)?;
    match e.downcast_ref::<T>() {
        Some(t) if e.ice_id() == t.ice_id() => Ok(t.clone()),
        _ => Err(Fail(format!("got the user exception {}", e.ice_id()))),
    }
}

/// The text an `UnknownUserException` or `UnknownLocalException` carries.
fn unknown_text(e: &Error) -> String {
    match e {
        Error::UnknownUserException(t)
        | Error::UnknownLocalException(t)
        | Error::UnknownException(t) => t.clone(),
        other => other.to_string(),
    }
}

fn record(name: &str) -> Record {
    Record {
        name: name.into(),
        weight: 2.5,
        flag: true,
        values: vec![1, 2, 3],
        color: Color::Blue,
    }
}

fn base(b: &str) -> Shared<Base> {
    Some(ClassRef::new(Base { b: b.into() }))
}

fn derived(b: &str, d: i32) -> Shared<Base> {
    Some(
        ClassRef::new(Derived {
            base: Base { b: b.into() },
            d,
            p: Point { x: 1, y: 2 },
        })
        .upcast(),
    )
}

fn same_derived(got: &Shared<Base>, b: &str, d: i32, what: &str) -> R {
    let got = got.as_ref().ok_or_else(|| Fail(format!("{what}: null")))?;
    let x = got
        .downcast::<Derived>()
        .filter(|_| got.ice_id() == "::Conf::Derived")
        .ok_or_else(|| Fail(format!("{what}: a {} is not a Derived", got.ice_id())))?;
    let x = x.read();
    eq(
        (x.base.b.as_str(), x.d, x.p.clone()),
        (b, d, Point { x: 1, y: 2 }),
        what,
    )
}

fn same_derived_value(got: &Option<ValuePtr>, b: &str, d: i32, what: &str) -> R {
    let got = got.as_ref().ok_or_else(|| Fail(format!("{what}: null")))?;
    same_derived(&got.downcast::<Base>(), b, d, what)
}

fn plain_shape(s: &Shared<Shape>, name: &str, what: &str) -> R {
    let s = s.as_ref().ok_or_else(|| Fail(format!("{what}: null")))?;
    ensure!(
        s.ice_id() == "::Conf::Shape",
        "{what}: a {} is not a plain Shape",
        s.ice_id()
    );
    eq(s.read().name.as_str(), name, what)
}

fn ident(p: &floe::codegen::Proxy) -> String {
    floe::wire::identity_to_string(p.identity(), floe::wire::ToStringMode::Unicode)
}

/// The nodes of a chain or cycle, each once, at most 1000.
fn nodes(n: &Shared<Node>) -> Vec<ClassRef<Node>> {
    let mut out: Vec<ClassRef<Node>> = Vec::new();
    let mut next = n.clone();
    while let Some(node) = next {
        if out.len() == 1000 || out.iter().any(|seen| ClassRef::ptr_eq(seen, &node)) {
            break;
        }
        next = node.read().next.clone();
        out.push(node);
    }
    out
}

fn values(n: &Shared<Node>) -> Vec<i32> {
    nodes(n).iter().map(|n| n.read().value).collect()
}

fn break_links(n: &Shared<Node>) {
    for node in nodes(n) {
        node.write().next = None;
    }
}

fn chain_of(n: i32) -> Shared<Node> {
    let mut head = None;
    for value in (1..=n).rev() {
        head = Some(ClassRef::new(Node { value, next: head }));
    }
    head
}

/// Nodes 1 -> 2 -> 1.
fn cycle() -> Shared<Node> {
    let a = ClassRef::new(Node {
        value: 1,
        next: None,
    });
    let b = ClassRef::new(Node {
        value: 2,
        next: Some(a.clone()),
    });
    a.write().next = Some(b);
    Some(a)
}

/// One configuration's proxies.
pub struct Ctx {
    communicator: Communicator,
    port: u16,
    /// The server's adapter of facets and default servants.
    facets_port: u16,
    enc10: bool,
    cycles: bool,
    /// The server's kind: `cpp`, `python`, `python38` (Ice 3.8) or `floe`.
    server: String,
    ops: OperationsPrx,
    opt: OptionalsPrx,
    obj: ObjectsPrx,
    exc: ExceptionsPrx,
    sexc: SlicedExceptionsPrx,
    sobj: SlicedObjectsPrx,
    cobj: CompactObjectsPrx,
    relaying: RelayingPrx,
    vf: ValuesPrx,
    /// The client's own Relay servant, in the configuration's encoding.
    relay: RelayPrx,
}

impl Ctx {
    fn proxy(&self, name: &str) -> floe::codegen::Proxy {
        proxy(&self.communicator, self.port, self.enc10, name)
    }

    /// Ice for C++ (and floe, which follows it) refuses class graphs with
    /// cycles unless `Ice.AcceptClassCycles` is set; in encoding 1.0 it
    /// only sees an instance that refers to itself. Ice for Python (3.7
    /// and 3.8) accepts every cycle. Whether a peer of `kind` refuses one
    /// here:
    fn refuses(&self, kind: &str, self_loop: bool) -> bool {
        !matches!(kind, "python" | "python38") && !self.cycles && (self_loop || !self.enc10)
    }

    /// Whether the server's exceptions come in the sliced format: 1.0
    /// always writes slice sizes, and Ice 3.8 marshals every exception in
    /// the sliced format.
    fn sliced_exceptions(&self) -> bool {
        self.enc10 || self.server == "python38"
    }
}

fn proxy(communicator: &Communicator, port: u16, enc10: bool, name: &str) -> floe::codegen::Proxy {
    communicator
        .string_to_proxy(&format!("{name}:tcp -h 127.0.0.1 -p {port} -t 10000"))
        .expect("a proxy string")
        .ice_encoding_version(if enc10 { ENCODING_1_0 } else { ENCODING_1_1 })
}

// ------------------------------------------------------------ operations

async fn ops_void(c: &Ctx) -> R {
    Ok(c.ops.op_void().await?)
}

async fn ops_builtins(c: &Ctx) -> R {
    c.ops.ice_ping().await?;
    ensure!(
        c.ops.ice_is_a("::Conf::Operations").await?,
        "ice_isA(::Conf::Operations)"
    );
    ensure!(
        !c.ops.ice_is_a("::Conf::Optionals").await?,
        "ice_isA(::Conf::Optionals)"
    );
    let mut ids = c.ops.ice_ids().await?;
    ids.sort();
    eq(
        ids,
        vec!["::Conf::Operations".into(), "::Ice::Object".into()],
        "ice_ids",
    )?;
    eq(c.ops.ice_id().await?, "::Conf::Operations".into(), "ice_id")
}

async fn ops_checked_cast(c: &Ctx) -> R {
    let base = c.ops.proxy().clone();
    ensure!(
        OperationsPrx::checked_cast(base.clone()).await?.is_some(),
        "checkedCast to Operations"
    );
    ensure!(
        OptionalsPrx::checked_cast(base).await?.is_none(),
        "checkedCast to Optionals"
    );
    Ok(())
}

async fn ops_byte(c: &Ctx) -> R {
    eq(
        c.ops.op_byte(0xff, 0x0f).await?.into(),
        (0xff, 0x0f),
        "opByte(255, 15)",
    )?;
    eq(
        c.ops.op_byte(0, 0x80).await?.into(),
        (0, 0x80),
        "opByte(0, 128)",
    )
}

async fn ops_bool(c: &Ctx) -> R {
    eq(
        c.ops.op_bool(true, false).await?.into(),
        (true, false),
        "opBool(true, false)",
    )?;
    eq(
        c.ops.op_bool(false, true).await?.into(),
        (false, true),
        "opBool(false, true)",
    )
}

async fn ops_short_int_long(c: &Ctx) -> R {
    eq(
        c.ops
            .op_short_int_long(i16::MIN, i32::MAX, i64::MIN)
            .await?
            .into(),
        (i64::MIN, i16::MIN, i32::MAX, i64::MIN),
        "minima/maxima",
    )?;
    eq(
        c.ops
            .op_short_int_long(i16::MAX, i32::MIN, i64::MAX)
            .await?
            .into(),
        (i64::MAX, i16::MAX, i32::MIN, i64::MAX),
        "maxima/minima",
    )
}

async fn ops_float_double(c: &Ctx) -> R {
    eq(
        c.ops.op_float_double(3.5, -1e300).await?.into(),
        (-1e300, 3.5, -1e300),
        "opFloatDouble(3.5, -1e300)",
    )?;
    eq(
        c.ops.op_float_double(f32::MAX, 5e-324).await?.into(),
        (5e-324, f32::MAX, 5e-324),
        "extremes",
    )
}

async fn ops_float_special(c: &Ctx) -> R {
    let (r, p3, p4) = c.ops.op_float_double(f32::INFINITY, f64::NAN).await?.into();
    ensure!(
        r.is_nan() && p4.is_nan() && p3 == f32::INFINITY,
        "inf/nan: {:?}",
        (r, p3, p4)
    );
    let (r, p3, p4) = c.ops.op_float_double(-0.0, f64::NEG_INFINITY).await?.into();
    ensure!(
        r == f64::NEG_INFINITY && p3 == 0.0 && p3.is_sign_negative(),
        "-0/-inf: {:?}",
        (r, p3, p4)
    );
    Ok(())
}

async fn ops_string(c: &Ctx) -> R {
    let (a, b) = ("h\u{e9}llo ", "w\u{f6}rld \u{20ac}\u{1F600}");
    eq(
        c.ops.op_string(a, b).await?.into(),
        (format!("{a}{b}"), format!("{b}{a}")),
        "unicode",
    )?;
    eq(
        c.ops.op_string("", "").await?.into(),
        (String::new(), String::new()),
        "empty",
    )?;
    eq(
        c.ops.op_string("a\0b", "c").await?.into(),
        ("a\0bc".into(), "ca\0b".into()),
        "embedded NUL",
    )
}

async fn ops_string_long(c: &Ctx) -> R {
    let s = "x".repeat(100_000);
    let (r, p3) = c.ops.op_string(&s, "y").await?.into();
    ensure!(
        r == format!("{s}y") && p3 == format!("y{s}"),
        "100000 characters"
    );
    Ok(())
}

async fn ops_enum(c: &Ctx) -> R {
    eq(
        c.ops.op_enum(Color::Blue, Level::High).await?.into(),
        (Color::Blue, Level::High),
        "Blue, High",
    )?;
    eq(
        c.ops.op_enum(Color::Red, Level::Low).await?.into(),
        (Color::Red, Level::Low),
        "Red, Low",
    )
}

async fn ops_struct(c: &Ctx) -> R {
    let p = Point { x: 1, y: -2 };
    eq(
        c.ops.op_struct(&p, &record("r")).await?.into(),
        (p.clone(), record("r")),
        "opStruct",
    )
}

fn nested() -> Nested {
    Nested {
        p: Point { x: 3, y: 4 },
        r: Record {
            name: "n".into(),
            weight: -0.5,
            flag: false,
            values: vec![7],
            color: Color::Red,
        },
        d: BTreeMap::from([("a".into(), vec![1, 2]), ("b".into(), vec![])]),
        lv: Level::High,
        ps: vec![Point { x: 1, y: 1 }, Point { x: 2, y: 2 }],
    }
}

async fn ops_nested(c: &Ctx) -> R {
    let n = nested();
    eq(
        c.ops.op_nested(&n).await?.into(),
        (n.clone(), n),
        "opNested",
    )
}

async fn ops_defaults(c: &Ctx) -> R {
    let d = c.ops.op_defaults().await?;
    eq(
        (d.b, d.y, d.s, d.i, d.l, d.f, d.d, d.str.as_str(), d.c, d.lv),
        (
            true,
            254,
            -3,
            42,
            1234567890123,
            0.5,
            -1.25,
            "h\u{e9}llo",
            Color::Blue,
            Level::Mid,
        ),
        "Defaults()",
    )?;
    eq(ANSWER, 42, "Answer")
}

async fn ops_default_record(c: &Ctx) -> R {
    let want = Record {
        name: String::new(),
        weight: 0.0,
        flag: false,
        values: vec![],
        color: Color::Green,
    };
    eq(c.ops.op_default_record().await?, want, "Record()")
}

macro_rules! seq_check {
    ($name:ident, $op:ident, $value:expr, $empty:expr) => {
        async fn $name(c: &Ctx) -> R {
            let value = $value;
            let (r, p2) = c.ops.$op(&value).await?.into();
            let want: Vec<_> = value.iter().rev().cloned().collect();
            eq((r, p2), (want, value.clone()), stringify!($op))?;
            if $empty {
                let (r, p2) = c.ops.$op(&[]).await?.into();
                ensure!(r.is_empty() && p2.is_empty(), "{}(empty)", stringify!($op));
            }
            Ok(())
        }
    };
}

seq_check!(ops_bool_seq, op_bool_seq, vec![true, false, false], true);
seq_check!(
    ops_short_seq,
    op_short_seq,
    vec![i16::MIN, 0, i16::MAX],
    true
);
seq_check!(ops_int_seq, op_int_seq, vec![i32::MIN, 1, i32::MAX], true);
seq_check!(
    ops_int_seq_large,
    op_int_seq,
    (-50_000..50_000).collect::<Vec<i32>>(),
    false
);
seq_check!(ops_long_seq, op_long_seq, vec![i64::MIN, 2, i64::MAX], true);
seq_check!(ops_float_seq, op_float_seq, vec![0.5f32, -1.25, 3.0], true);
seq_check!(ops_double_seq, op_double_seq, vec![1e300, -2.5, 0.0], true);
seq_check!(
    ops_string_seq,
    op_string_seq,
    vec!["a".to_owned(), String::new(), "h\u{e9}llo".into()],
    true
);
seq_check!(
    ops_color_seq,
    op_color_seq,
    vec![Color::Red, Color::Blue, Color::Green],
    true
);
seq_check!(
    ops_point_seq,
    op_point_seq,
    (0..1000).map(|i| Point { x: i, y: -i }).collect::<Vec<_>>(),
    true
);
seq_check!(
    ops_record_seq,
    op_record_seq,
    vec![
        record("a"),
        Record {
            values: vec![],
            ..record("b")
        },
        Record {
            color: Color::Red,
            ..record("c")
        }
    ],
    true
);
seq_check!(
    ops_int_seq_seq,
    op_int_seq_seq,
    vec![vec![1, 2], vec![], vec![3]],
    true
);
seq_check!(
    ops_string_seq_seq,
    op_string_seq_seq,
    vec![vec!["a".to_owned(), "b".into()], vec![], vec!["c".into()]],
    true
);

async fn ops_byte_seq(c: &Ctx) -> R {
    let value: Vec<u8> = (0..4).flat_map(|_| 0..=255u8).collect();
    let (r, p2) = c.ops.op_byte_seq(value.clone()).await?.into();
    let want: Vec<u8> = value.iter().rev().copied().collect();
    eq((&r[..], &p2[..]), (&want[..], &value[..]), "opByteSeq")?;
    let (r, p2) = c.ops.op_byte_seq(Vec::new()).await?.into();
    ensure!(r.is_empty() && p2.is_empty(), "opByteSeq(empty)");
    Ok(())
}

macro_rules! dict_check {
    ($name:ident, $op:ident, $p1:expr, $p2:expr) => {
        async fn $name(c: &Ctx) -> R {
            let (p1, p2) = (BTreeMap::from($p1), BTreeMap::from($p2));
            let mut want = p1.clone();
            want.extend(p2.clone());
            eq(
                c.ops.$op(&p1, &p2).await?.into(),
                (want, p1.clone()),
                stringify!($op),
            )?;
            let (r, p3) = c.ops.$op(&BTreeMap::new(), &BTreeMap::new()).await?.into();
            ensure!(r.is_empty() && p3.is_empty(), "{}(empty)", stringify!($op));
            Ok(())
        }
    };
}

dict_check!(
    ops_byte_bool_dict,
    op_byte_bool_dict,
    [(1u8, true), (2, false)],
    [(2u8, true), (255, false)]
);
dict_check!(
    ops_short_int_dict,
    op_short_int_dict,
    [(-1i16, 1), (2, 2)],
    [(2i16, -2), (32767, 3)]
);
dict_check!(
    ops_long_float_dict,
    op_long_float_dict,
    [(1i64 << 40, 0.5f32)],
    [(-(1i64 << 40), -0.25f32)]
);
dict_check!(
    ops_int_double_dict,
    op_int_double_dict,
    [(1, 0.5), (2, 1e300)],
    [(2, -2.0)]
);
dict_check!(
    ops_string_string_dict,
    op_string_string_dict,
    [
        ("a".to_owned(), "x".to_owned()),
        ("b".into(), String::new())
    ],
    [
        ("b".to_owned(), "y".to_owned()),
        ("\u{e9}".into(), "z".into())
    ]
);
dict_check!(
    ops_string_color_dict,
    op_string_color_dict,
    [("r".to_owned(), Color::Red)],
    [("g".to_owned(), Color::Green)]
);
dict_check!(
    ops_color_string_dict,
    op_color_string_dict,
    [(Color::Red, "r".to_owned()), (Color::Blue, "b".into())],
    [(Color::Blue, "B".to_owned())]
);
dict_check!(
    ops_string_int_seq_dict,
    op_string_int_seq_dict,
    [("a".to_owned(), vec![1, 2]), ("e".into(), vec![])],
    [("a".to_owned(), vec![3])]
);
dict_check!(
    ops_point_string_dict,
    op_point_string_dict,
    [(Point { x: 1, y: 2 }, "a".to_owned())],
    [(Point { x: -1, y: 0 }, "b".to_owned())]
);
dict_check!(
    ops_string_record_dict,
    op_string_record_dict,
    [("a".to_owned(), record("a"))],
    [(
        "b".to_owned(),
        Record {
            values: vec![],
            ..record("b")
        }
    )]
);

async fn ops_idempotent(c: &Ctx) -> R {
    eq(c.ops.op_idempotent(41).await?, 42, "opIdempotent(41)")
}

async fn ops_amd(c: &Ctx) -> R {
    eq(c.ops.op_amd("x").await?, "amd:x".into(), "opAmd")
}

async fn ops_context(c: &Ctx) -> R {
    let ctx = |k: &str, v: &str| BTreeMap::from([(k.to_owned(), v.to_owned())]);
    eq(c.ops.op_context().await?, BTreeMap::new(), "no context")?;
    eq(
        c.ops.op_context_with_context(&ctx("c", "d")).await?,
        ctx("c", "d"),
        "per-call context",
    )?;
    eq(
        c.ops.ice_context(ctx("a", "b")).op_context().await?,
        ctx("a", "b"),
        "per-proxy context",
    )
}

async fn ops_proxy(c: &Ctx) -> R {
    let (r, p2) = c.ops.op_proxy(&Some(c.ops.clone())).await?.into();
    let r = r.ok_or_else(|| Fail("null returned".into()))?;
    let p2 = p2.ok_or_else(|| Fail("null out".into()))?;
    eq(ident(r.proxy()), "ops".into(), "returned identity")?;
    eq(ident(&p2), "ops".into(), "out identity")?;
    let host = |p: &floe::codegen::Proxy| (p.endpoints()[0].host.clone(), p.endpoints()[0].port);
    eq(host(r.proxy()), host(c.ops.proxy()), "endpoint")?;
    r.ice_ping().await?;
    let (r, p2) = c.ops.op_proxy(&None).await?.into();
    ensure!(r.is_none() && p2.is_none(), "null proxy");
    Ok(())
}

async fn ops_oneway(c: &Ctx) -> R {
    let v = if c.enc10 { 10 } else { 11 };
    c.ops.ice_oneway().op_oneway_set(v).await?;
    let deadline = Instant::now() + Duration::from_secs(5);
    while c.ops.op_oneway_get().await? != v && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    eq(c.ops.op_oneway_get().await?, v, "value set oneway")
}

// ------------------------------------------------------------ optionals

macro_rules! opt_check {
    ($name:ident, $op:ident, $value:expr, $v:ident => $arg:expr) => {
        async fn $name(c: &Ctx) -> R {
            let value = $value;
            let $v = &value;
            let got = c.opt.$op(Some($arg)).await?.into();
            if c.enc10 {
                // Encoding 1.0 has no optional values: nothing is sent.
                eq(got, (None, None), concat!(stringify!($op), " in 1.0"))?;
            } else {
                eq(
                    got,
                    (Some(value.clone()), Some(value.clone())),
                    stringify!($op),
                )?;
            }
            eq(
                c.opt.$op(None).await?.into(),
                (None, None),
                concat!(stringify!($op), "(unset)"),
            )
        }
    };
}

opt_check!(opt_byte, op_opt_byte, 200u8, v => *v);
opt_check!(opt_bool, op_opt_bool, true, v => *v);
opt_check!(opt_short, op_opt_short, -300i16, v => *v);
opt_check!(opt_int, op_opt_int, 1i32 << 20, v => *v);
opt_check!(opt_long, op_opt_long, -(1i64 << 50), v => *v);
opt_check!(opt_float, op_opt_float, 0.25f32, v => *v);
opt_check!(opt_double, op_opt_double, -1e200f64, v => *v);
opt_check!(
    opt_string,
    op_opt_string,
    "h\u{e9}llo".to_owned(),
    v => v.as_str()
);
opt_check!(opt_enum, op_opt_color, Color::Blue, v => *v);
opt_check!(
    opt_fixed_struct,
    op_opt_point,
    Point { x: 5, y: -6 },
    v => v
);
opt_check!(opt_var_struct, op_opt_record, record("r"), v => v);
opt_check!(opt_int_seq, op_opt_int_seq, vec![1, 2, 3], v => v
    .as_slice());
opt_check!(
    opt_string_seq,
    op_opt_string_seq,
    vec!["a".to_owned(), String::new(), "b".into()],
    v => v.as_slice()
);
opt_check!(
    opt_fixed_struct_seq,
    op_opt_point_seq,
    vec![Point { x: 1, y: 2 }, Point { x: 3, y: 4 }],
    v => v.as_slice()
);
opt_check!(
    opt_var_struct_seq,
    op_opt_record_seq,
    vec![record("a"), record("b")],
    v => v.as_slice()
);
opt_check!(
    opt_dict,
    op_opt_short_int_dict,
    BTreeMap::from([(1i16, 2), (-3, 4)]),
    v => v
);
opt_check!(
    opt_struct_dict,
    op_opt_string_record_dict,
    BTreeMap::from([("a".to_owned(), record("a"))]),
    v => v
);

async fn opt_class(c: &Ctx) -> R {
    let (r, p3) = c.opt.op_opt_base(&base("ob")).await?.into();
    if c.enc10 {
        ensure!(
            r.is_none() && p3.is_none(),
            "opOptBase in 1.0: something came back"
        );
    } else {
        for (what, got) in [("returned", r), ("out", p3)] {
            let got = got.ok_or_else(|| Fail(format!("{what}: unset or null")))?;
            ensure!(
                got.ice_id() == "::Conf::Base" && got.read().b == "ob",
                "{what}: {got:?}"
            );
        }
    }
    let (r, p3) = c.opt.op_opt_base(&None).await?.into();
    ensure!(r.is_none() && p3.is_none(), "unset: something came back");
    Ok(())
}

async fn opt_proxy(c: &Ctx) -> R {
    let (r, p3) = c.opt.op_opt_proxy(&Some(c.ops.clone())).await?.into();
    if c.enc10 {
        ensure!(
            r.is_none() && p3.is_none(),
            "opOptProxy in 1.0: something came back"
        );
    } else {
        for (what, got) in [("returned", r), ("out", p3)] {
            let got = got.ok_or_else(|| Fail(format!("{what}: unset or null")))?;
            eq(ident(got.proxy()), "ops".into(), what)?;
        }
    }
    let (r, p3) = c.opt.op_opt_proxy(&None).await?.into();
    ensure!(r.is_none() && p3.is_none(), "unset: something came back");
    Ok(())
}

async fn opt_mixed(c: &Ctx) -> R {
    let got = c.opt.op_mixed(Some("s"), 5, Some(7)).await?.into();
    if c.enc10 {
        eq(got, (5, None, 6, None), "opMixed in 1.0")?;
    } else {
        eq(got, (5, Some("s".into()), 6, Some(7)), "opMixed")?;
    }
    eq(
        c.opt.op_mixed(None, -1, None).await?.into(),
        (-1, None, 0, None),
        "opMixed(unset)",
    )
}

async fn opt_class_members_set(c: &Ctx) -> R {
    // An Ice 3.8 server (whose WithOptionals has no obj: Ice 3.8 has no
    // optional classes) fails the dispatch of one whose obj is set
    // ("cannot skip optional class"): obj is sent to the others only.
    let send_obj = c.server != "python38";
    let w = WithOptionals {
        req: 1,
        i: Some(2),
        s: Some("s".into()),
        p: Some(Point { x: 1, y: 2 }),
        seq: Some(vec![1, 2]),
        c: Some(Color::Blue),
        r: Some(record("r")),
        obj: if send_obj { base("o") } else { None },
    };
    let got = c
        .opt
        .op_with_optionals(&Some(ClassRef::new(w)))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    ensure!(
        got.ice_id() == "::Conf::WithOptionals",
        "type {}",
        got.ice_id()
    );
    let g = got.read();
    let members = (
        g.req,
        g.i,
        g.s.clone(),
        g.p.clone(),
        g.seq.clone(),
        g.c,
        g.r.clone(),
    );
    if c.enc10 {
        // Encoding 1.0 drops optional class members.
        eq(
            members,
            (1, None, None, None, None, None, None),
            "members in 1.0",
        )?;
        ensure!(g.obj.is_none(), "obj in 1.0: {:?}", g.obj);
    } else {
        eq(
            members,
            (
                1,
                Some(2),
                Some("s".into()),
                Some(Point { x: 1, y: 2 }),
                Some(vec![1, 2]),
                Some(Color::Blue),
                Some(record("r")),
            ),
            "members",
        )?;
        let obj = g.obj.clone();
        if send_obj {
            ensure!(
                obj.as_ref()
                    .is_some_and(|o| o.ice_id() == "::Conf::Base" && o.read().b == "o"),
                "obj {obj:?}"
            );
        } else {
            ensure!(obj.is_none(), "obj {obj:?}");
        }
    }
    Ok(())
}

async fn opt_class_members_unset(c: &Ctx) -> R {
    let w = WithOptionals {
        req: 3,
        ..WithOptionals::default()
    };
    let got = c
        .opt
        .op_with_optionals(&Some(ClassRef::new(w)))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let g = got.read();
    eq(
        (
            g.req,
            g.i,
            g.s.clone(),
            g.p.clone(),
            g.seq.clone(),
            g.c,
            g.r.clone(),
            g.obj.is_none(),
        ),
        (3, None, None, None, None, None, None, true),
        "members",
    )
}

async fn opt_exception(c: &Ctx) -> R {
    let e: OptError = user_error_as(c.opt.op_opt_error(1, Some(2), Some("s")).await)?;
    let want = if c.enc10 {
        (1, None, None)
    } else {
        (1, Some(2), Some("s".to_owned()))
    };
    eq((e.req, e.i, e.s), want, "OptError")?;
    let e: OptError = user_error_as(c.opt.op_opt_error(4, None, None).await)?;
    eq((e.req, e.i, e.s), (4, None, None), "OptError(unset)")
}

// ------------------------------------------------------------ objects

async fn obj_base(c: &Ctx) -> R {
    let (r, p2) = c.obj.op_base(&base("b")).await?.into();
    let r = r.ok_or_else(|| Fail("null".into()))?;
    ensure!(
        r.ice_id() == "::Conf::Base" && r.read().b == "b",
        "returned {r:?}"
    );
    ensure!(
        p2.is_some_and(|p2| ClassRef::ptr_eq(&r, &p2)),
        "the returned and out instances are not one"
    );
    Ok(())
}

async fn obj_derived(c: &Ctx) -> R {
    let (r, p2) = c.obj.op_base(&derived("d", 4)).await?.into();
    same_derived(&r, "d", 4, "returned")?;
    ensure!(
        matches!((&r, &p2), (Some(r), Some(p2)) if ClassRef::ptr_eq(r, p2)),
        "the returned and out instances are not one"
    );
    Ok(())
}

async fn obj_null(c: &Ctx) -> R {
    let (r, p2) = c.obj.op_base(&None).await?.into();
    ensure!(r.is_none() && p2.is_none(), "opBase(null)");
    Ok(())
}

async fn obj_compact_id(c: &Ctx) -> R {
    let compact = |b: &str, v: i64| {
        ClassRef::new(Compact {
            base: Base { b: b.into() },
            c: v,
        })
    };
    let r = c
        .obj
        .op_compact(&Some(compact("c", -9)))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    ensure!(
        r.ice_id() == "::Conf::Compact" && (r.read().base.b.as_str(), r.read().c) == ("c", -9),
        "opCompact {r:?}"
    );
    let (r, _) = c
        .obj
        .op_base(&Some(compact("as base", 1 << 40).upcast()))
        .await?
        .into();
    let r = r.and_then(|r| r.downcast::<Compact>());
    ensure!(
        r.as_ref().is_some_and(|r| r.read().c == 1 << 40),
        "opBase(Compact) {r:?}"
    );
    Ok(())
}

async fn obj_shared(c: &Ctx) -> R {
    let x = base("x");
    let r = c
        .obj
        .op_pair(&Some(ClassRef::new(Pair {
            first: x.clone(),
            second: x,
        })))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let r = r.read();
    ensure!(
        matches!((&r.first, &r.second), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b) && a.read().b == "x"),
        "first and second are not one instance"
    );
    Ok(())
}

async fn obj_distinct(c: &Ctx) -> R {
    let r = c
        .obj
        .op_pair(&Some(ClassRef::new(Pair {
            first: base("a"),
            second: derived("b", 4),
        })))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let r = r.read();
    ensure!(
        !matches!((&r.first, &r.second), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "distinct instances came back as one"
    );
    eq(
        r.first.as_ref().map(|f| f.read().b.clone()),
        Some("a".into()),
        "first",
    )?;
    same_derived(&r.second, "b", 4, "second")
}

async fn obj_seq(c: &Ctx) -> R {
    let d = derived("d", 4);
    let r = c.obj.op_base_seq(&[base("a"), d.clone(), None, d]).await?;
    eq(r.len(), 4, "length")?;
    ensure!(
        r[0].as_ref()
            .is_some_and(|x| x.ice_id() == "::Conf::Base" && x.read().b == "a"),
        "[0] {:?}",
        r[0]
    );
    same_derived(&r[1], "d", 4, "[1]")?;
    ensure!(r[2].is_none(), "[2] is not null");
    ensure!(
        matches!((&r[1], &r[3]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "[1] and [3] are not one instance"
    );
    Ok(())
}

async fn obj_dict(c: &Ctx) -> R {
    let d = derived("d", 4);
    let p = BTreeMap::from([
        ("a".to_owned(), base("a")),
        ("b".into(), d.clone()),
        ("c".into(), d),
        ("n".into(), None),
    ]);
    let r = c.obj.op_base_dict(&p).await?;
    eq(
        r.keys().cloned().collect::<Vec<_>>(),
        vec!["a".into(), "b".into(), "c".into(), "n".into()],
        "keys",
    )?;
    eq(
        r["a"].as_ref().map(|a| a.read().b.clone()),
        Some("a".into()),
        "a",
    )?;
    same_derived(&r["b"], "d", 4, "b")?;
    ensure!(
        matches!((&r["b"], &r["c"]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "b and c are not one instance"
    );
    ensure!(r["n"].is_none(), "n is not null");
    Ok(())
}

async fn obj_struct_member(c: &Ctx) -> R {
    let r = c
        .obj
        .op_carrier(&Carrier {
            label: "l".into(),
            obj: derived("d", 4),
        })
        .await?;
    eq(r.label.as_str(), "l", "label")?;
    same_derived(&r.obj, "d", 4, "obj")?;
    let r = c
        .obj
        .op_carrier(&Carrier {
            label: "n".into(),
            obj: None,
        })
        .await?;
    ensure!(r.obj.is_none(), "null obj");
    Ok(())
}

async fn obj_value(c: &Ctx) -> R {
    let d: Option<ValuePtr> = derived("d", 4).map(Into::into);
    same_derived_value(&c.obj.op_value(&d).await?, "d", 4, "opValue(Derived)")?;
    ensure!(c.obj.op_value(&None).await?.is_none(), "opValue(null)");
    let node = ValuePtr::new(Node {
        value: 1,
        next: None,
    });
    let r = c.obj.op_value(&Some(node)).await?;
    let r = r.and_then(|r| r.downcast::<Node>());
    ensure!(
        r.as_ref().is_some_and(|n| n.read().value == 1),
        "opValue(Node) {r:?}"
    );
    Ok(())
}

async fn obj_all_types(c: &Ctx) -> R {
    let a = AllTypes {
        b: true,
        y: 7,
        s: -7,
        i: 70000,
        l: -(1 << 40),
        f: 0.5,
        d: 1e100,
        str: "all".into(),
        c: Color::Green,
        lv: Level::High,
        p: Point { x: 9, y: 8 },
        r: record("r"),
        seq: vec![4, 5],
        dict: BTreeMap::from([("k".into(), "v".into())]),
        obj: derived("d", 4),
        prx: Some(c.ops.clone()),
    };
    let r = c
        .obj
        .op_all_types(&Some(ClassRef::new(a.clone())))
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    let r = r.read();
    let members = |x: &AllTypes| {
        (
            (x.b, x.y, x.s, x.i, x.l, x.f, x.d),
            (
                x.str.clone(),
                x.c,
                x.lv,
                x.p.clone(),
                x.r.clone(),
                x.seq.clone(),
                x.dict.clone(),
            ),
        )
    };
    eq(members(&r), members(&a), "members")?;
    same_derived(&r.obj, "d", 4, "obj")?;
    eq(
        r.prx.as_ref().map(|p| ident(p.proxy())),
        Some("ops".into()),
        "prx",
    )
}

async fn obj_chain(c: &Ctx) -> R {
    eq(
        values(&c.obj.make_chain(10).await?),
        (1..=10).collect(),
        "makeChain(10)",
    )?;
    let chain = chain_of(3);
    eq(
        values(&c.obj.op_node(&chain).await?),
        vec![1, 2, 3],
        "opNode",
    )?;
    eq(c.obj.count_nodes(&chain).await?, 3, "countNodes")
}

async fn obj_deep_chain(c: &Ctx) -> R {
    // Deeper than Ice.ClassGraphDepthMax (100), in either encoding.
    raises(c.obj.make_chain(150).await, "::Ice::MarshalException")?;
    eq(
        nodes(&c.obj.make_chain(90).await?).len(),
        90,
        "makeChain(90)",
    )
}

async fn obj_deep_chain_send(c: &Ctx) -> R {
    raises(
        c.obj.count_nodes(&chain_of(150)).await,
        "::Ice::UnknownLocalException",
    )?;
    eq(
        c.obj.count_nodes(&chain_of(90)).await?,
        90,
        "countNodes(chain of 90)",
    )
}

async fn obj_cycle_send(c: &Ctx) -> R {
    let a = cycle();
    let result = c.obj.count_nodes(&a).await;
    break_links(&a);
    if c.refuses(&c.server, false) {
        let e = raises(result, "::Ice::UnknownLocalException")?;
        let text = unknown_text(&e);
        ensure!(
            text.to_lowercase().contains("cycle") || text.contains("Marshal"),
            "reason: {text}"
        );
        Ok(())
    } else {
        eq(result?, 2, "countNodes(cycle)")
    }
}

async fn obj_cycle_return(c: &Ctx) -> R {
    let result = c.obj.make_cycle(3).await;
    if c.refuses("floe", false) {
        raises(result, "::Ice::MarshalException")?;
        return Ok(());
    }
    let n = result?;
    let ok = values(&n) == [1, 2, 3]
        && n.as_ref().is_some_and(|first| {
            let third = nodes(&n)[2].clone();
            let back = third.read().next.clone();
            back.is_some_and(|b| ClassRef::ptr_eq(&b, first))
        });
    break_links(&n);
    ensure!(ok, "not a cycle of 1, 2, 3");
    Ok(())
}

async fn obj_cycle_echo(c: &Ctx) -> R {
    let n = ClassRef::new(Node {
        value: 5,
        next: None,
    });
    n.write().next = Some(n.clone());
    let n = Some(n);
    let result = c.obj.op_node(&n).await;
    break_links(&n);
    if c.refuses(&c.server, true) {
        raises(result, "::Ice::UnknownLocalException")?;
    } else if c.refuses("floe", true) {
        raises(result, "::Ice::MarshalException")?;
    } else {
        let r = result?;
        let ok = r.as_ref().is_some_and(|r| {
            let next = r.read().next.clone();
            r.read().value == 5 && next.is_some_and(|x| ClassRef::ptr_eq(&x, r))
        });
        break_links(&r);
        ensure!(ok, "self-loop");
    }
    Ok(())
}

async fn obj_sliced_format(c: &Ctx) -> R {
    same_derived(
        &c.obj.op_base_sliced(&derived("d", 4)).await?,
        "d",
        4,
        "opBaseSliced(Derived)",
    )?;
    eq(
        c.obj
            .op_base_sliced(&base("b"))
            .await?
            .map(|b| b.read().b.clone()),
        Some("b".into()),
        "opBaseSliced(Base)",
    )
}

// ------------------------------------------------------------ exceptions

async fn exc_base(c: &Ctx) -> R {
    let e: BaseError = user_error_as(c.exc.throw_base("r").await)?;
    eq(e.reason.as_str(), "r", "reason")
}

async fn exc_derived(c: &Ctx) -> R {
    let e = user_error(c.exc.throw_derived("d", 3).await)?;
    eq(e.ice_id(), "::Conf::DerivedError", "ice_id")?;
    let d = e
        .downcast_ref::<DerivedError>()
        .ok_or_else(|| Fail("not a DerivedError".into()))?;
    eq((d.base.reason.as_str(), d.code), ("d", 3), "DerivedError")?;
    ensure!(
        e.downcast_ref::<BaseError>().is_some(),
        "not caught as BaseError"
    );
    Ok(())
}

async fn exc_derived_declared(c: &Ctx) -> R {
    let e: DerivedError = user_error_as(c.exc.throw_derived_as_derived("dd", -3).await)?;
    eq((e.base.reason.as_str(), e.code), ("dd", -3), "DerivedError")
}

async fn exc_class_member(c: &Ctx) -> R {
    let e: ClassError = user_error_as(c.exc.throw_class_error(&derived("d", 4)).await)?;
    eq(e.base.reason.as_str(), "class", "reason")?;
    same_derived(&e.obj, "d", 4, "obj")?;
    let e: ClassError = user_error_as(c.exc.throw_class_error(&None).await)?;
    ensure!(e.obj.is_none(), "null obj");
    Ok(())
}

async fn exc_other(c: &Ctx) -> R {
    let e = raises(c.exc.throw_other(4).await, "::Ice::UnknownUserException")?;
    ensure!(unknown_text(&e).contains("OtherError"), "unknown: {e}");
    Ok(())
}

async fn exc_undeclared(c: &Ctx) -> R {
    let e = raises(
        c.exc.throw_undeclared(4).await,
        "::Ice::UnknownUserException",
    )?;
    ensure!(unknown_text(&e).contains("OtherError"), "unknown: {e}");
    Ok(())
}

async fn exc_non_ice(c: &Ctx) -> R {
    raises(c.exc.throw_non_ice().await, "::Ice::UnknownException")?;
    Ok(())
}

async fn exc_not_exist(c: &Ctx) -> R {
    raises(
        c.exc.throw_not_exist().await,
        "::Ice::ObjectNotExistException",
    )?;
    Ok(())
}

async fn exc_nothing(c: &Ctx) -> R {
    match c.exc.throw_nothing().await {
        Ok(()) => Ok(()),
        Err(e) => Err(Fail(format!("raised {}", e.ice_name()))),
    }
}

async fn exc_object_not_exist(c: &Ctx) -> R {
    let missing = OperationsPrx::unchecked_cast(c.proxy("missing"));
    raises(missing.op_void().await, "::Ice::ObjectNotExistException")?;
    Ok(())
}

async fn exc_facet_not_exist(c: &Ctx) -> R {
    let facet = OperationsPrx::unchecked_cast(c.ops.ice_facet("nofacet"));
    raises(facet.op_void().await, "::Ice::FacetNotExistException")?;
    Ok(())
}

async fn exc_operation_not_exist(c: &Ctx) -> R {
    let unimplemented = UnimplementedPrx::unchecked_cast(c.exc.proxy().clone());
    raises(
        unimplemented.missing().await,
        "::Ice::OperationNotExistException",
    )?;
    Ok(())
}

async fn exc_server_derived_compact(c: &Ctx) -> R {
    let r = c.exc.throw_server_derived().await;
    if c.sliced_exceptions() {
        // The client slices to what it knows.
        let e: DerivedError = user_error_as(r)?;
        eq(
            (e.base.reason.as_str(), e.code),
            ("server", 7),
            "DerivedError",
        )
    } else {
        raises(r, "::Ice::UnknownUserException").map(drop)
    }
}

async fn exc_shape_error_compact(c: &Ctx) -> R {
    let r = c.exc.throw_shape_error().await;
    if c.sliced_exceptions() {
        let e: ShapeError = user_error_as(r)?;
        plain_shape(&e.shape, "c", "shape")
    } else {
        raises(r, "::Ice::NoValueFactoryException").map(drop)
    }
}

// ------------------------------------------------------------ sliced exceptions

async fn sexc_server_derived(c: &Ctx) -> R {
    let e: DerivedError = user_error_as(c.sexc.throw_server_derived().await)?;
    eq(
        (e.base.reason.as_str(), e.code),
        ("server", 7),
        "DerivedError",
    )
}

async fn sexc_server_base(c: &Ctx) -> R {
    let e: BaseError = user_error_as(c.sexc.throw_server_base().await)?;
    eq(e.reason.as_str(), "server", "reason")
}

async fn sexc_server_class(c: &Ctx) -> R {
    let e: BaseError = user_error_as(c.sexc.throw_server_class().await)?;
    eq(e.reason.as_str(), "classes", "reason")
}

async fn sexc_shape_error(c: &Ctx) -> R {
    let e: ShapeError = user_error_as(c.sexc.throw_shape_error().await)?;
    plain_shape(&e.shape, "c", "shape")
}

async fn sexc_isolated(c: &Ctx) -> R {
    // Nothing in the exception is known. In 1.1 the last slice says so and
    // the client raises UnknownUserException, except from an Ice 3.7 C++11
    // server, which never flags the last slice of a user exception; 1.0 has
    // no such flag: the client reads past the end.
    let r = c.sexc.throw_isolated().await;
    if c.enc10 || c.server == "cpp" {
        raises(r, "::Ice::UnmarshalOutOfBoundsException").map(drop)
    } else {
        raises(r, "::Ice::UnknownUserException").map(drop)
    }
}

async fn sexc_known(c: &Ctx) -> R {
    let e: DerivedError = user_error_as(c.sexc.throw_known().await)?;
    eq(
        (e.base.reason.as_str(), e.code),
        ("known", 9),
        "DerivedError",
    )
}

// ------------------------------------------------------------ sliced objects

async fn sobj_circle(c: &Ctx) -> R {
    plain_shape(&c.sobj.get_circle().await?, "circle", "getCircle")
}

async fn sobj_ring(c: &Ctx) -> R {
    plain_shape(&c.sobj.get_ring().await?, "ring", "getRing")
}

async fn sobj_compact_id(c: &Ctx) -> R {
    plain_shape(&c.sobj.get_square().await?, "square", "getSquare")
}

async fn sobj_unknown(c: &Ctx) -> R {
    let r = c.sobj.get_hidden().await;
    if c.enc10 {
        return raises(r, "::Ice::NoValueFactoryException").map(drop);
    }
    let v = r?.ok_or_else(|| Fail("null".into()))?;
    let guard = v.read();
    let value: &dyn std::any::Any = &**guard;
    ensure!(
        value.downcast_ref::<UnknownSlicedValue>().is_some(),
        "a {} is not an UnknownSlicedValue",
        guard.ice_id()
    );
    eq(guard.ice_id(), "::Conf::Hidden", "ice_id")
}

async fn sobj_linked(c: &Ctx) -> R {
    let (r, other) = c.sobj.get_linked().await?.into();
    plain_shape(&r, "c", "returned")?;
    plain_shape(&other, "s2", "other")
}

async fn sobj_seq(c: &Ctx) -> R {
    let s = c.sobj.get_shapes().await?;
    eq(s.len(), 5, "length")?;
    plain_shape(&s[0], "c", "[0]")?;
    plain_shape(&s[1], "plain", "[1]")?;
    ensure!(
        matches!((&s[0], &s[2]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "[0] and [2] are not one instance"
    );
    ensure!(s[3].is_none(), "[3] is not null");
    plain_shape(&s[4], "ring", "[4]")
}

async fn sobj_dict(c: &Ctx) -> R {
    let d = c.sobj.get_shape_dict().await?;
    eq(d.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3], "keys")?;
    plain_shape(&d[&1], "c", "1")?;
    ensure!(
        matches!((&d[&1], &d[&2]), (Some(a), Some(b)) if ClassRef::ptr_eq(a, b)),
        "1 and 2 are not one instance"
    );
    plain_shape(&d[&3], "plain", "3")
}

async fn sobj_preserved(c: &Ctx) -> R {
    let k = c.sobj.get_keeper().await?;
    ensure!(
        k.as_ref()
            .is_some_and(|k| k.ice_id() == "::Conf::Keeper" && k.read().k == "keeper"),
        "getKeeper {k:?}"
    );
    let want = if c.enc10 {
        "Keeper:keeper"
    } else {
        "KeeperDerived:keeper:x:kb:kl"
    };
    eq(c.sobj.check_keeper(&k).await?, want.into(), "checkKeeper")
}

async fn sobj_not_preserved(c: &Ctx) -> R {
    let s = c.sobj.get_circle().await?;
    eq(
        c.sobj.check_shape(&s).await?,
        "::Conf::Shape:circle".into(),
        "checkShape(getCircle())",
    )
}

async fn sobj_known_derived(c: &Ctx) -> R {
    same_derived(&c.sobj.get_derived().await?, "d", 5, "getDerived")
}

async fn sobj_unknown_optionals(c: &Ctx) -> R {
    let w = c
        .sobj
        .get_more_optionals()
        .await?
        .ok_or_else(|| Fail("null".into()))?;
    ensure!(
        w.ice_id() == "::Conf::WithOptionals",
        "a {} is not a plain WithOptionals",
        w.ice_id()
    );
    let w = w.read();
    let i = if c.enc10 { None } else { Some(2) };
    eq((w.req, w.i, w.s.clone()), (1, i, None), "members")
}

async fn cobj_circle(c: &Ctx) -> R {
    let r = c.cobj.get_circle().await;
    if c.enc10 {
        plain_shape(&r?, "circle", "getCircle in 1.0")
    } else {
        raises(r, "::Ice::NoValueFactoryException").map(drop)
    }
}

async fn cobj_unknown(c: &Ctx) -> R {
    raises(c.cobj.get_hidden().await, "::Ice::NoValueFactoryException").map(drop)
}

async fn cobj_circle_sliced(c: &Ctx) -> R {
    plain_shape(
        &c.cobj.get_circle_sliced().await?,
        "circle",
        "getCircleSliced",
    )
}

async fn cobj_known_derived(c: &Ctx) -> R {
    same_derived(&c.cobj.get_derived().await?, "d", 5, "getDerived")
}

// ------------------------------------------------------------ driver

macro_rules! checks {
    ($($name:literal => $f:path,)*) => {
        /// Every check, in the order the Python and C++ clients run them.
        pub const CHECKS: &[&str] = &[$($name),*];

        async fn run_check(name: &str, c: &Ctx) -> R {
            match name {
                $($name => $f(c).await,)*
                _ => unreachable!("no check {name}"),
            }
        }
    };
}

checks! {
    "ops.void" => ops_void,
    "ops.builtins" => ops_builtins,
    "ops.checked_cast" => ops_checked_cast,
    "ops.byte" => ops_byte,
    "ops.bool" => ops_bool,
    "ops.short_int_long" => ops_short_int_long,
    "ops.float_double" => ops_float_double,
    "ops.float_special" => ops_float_special,
    "ops.string" => ops_string,
    "ops.string_long" => ops_string_long,
    "ops.enum" => ops_enum,
    "ops.struct" => ops_struct,
    "ops.nested" => ops_nested,
    "ops.defaults" => ops_defaults,
    "ops.default_record" => ops_default_record,
    "ops.bool_seq" => ops_bool_seq,
    "ops.byte_seq" => ops_byte_seq,
    "ops.short_seq" => ops_short_seq,
    "ops.int_seq" => ops_int_seq,
    "ops.int_seq_large" => ops_int_seq_large,
    "ops.long_seq" => ops_long_seq,
    "ops.float_seq" => ops_float_seq,
    "ops.double_seq" => ops_double_seq,
    "ops.string_seq" => ops_string_seq,
    "ops.color_seq" => ops_color_seq,
    "ops.point_seq" => ops_point_seq,
    "ops.record_seq" => ops_record_seq,
    "ops.int_seq_seq" => ops_int_seq_seq,
    "ops.string_seq_seq" => ops_string_seq_seq,
    "ops.byte_bool_dict" => ops_byte_bool_dict,
    "ops.short_int_dict" => ops_short_int_dict,
    "ops.long_float_dict" => ops_long_float_dict,
    "ops.int_double_dict" => ops_int_double_dict,
    "ops.string_string_dict" => ops_string_string_dict,
    "ops.string_color_dict" => ops_string_color_dict,
    "ops.color_string_dict" => ops_color_string_dict,
    "ops.string_int_seq_dict" => ops_string_int_seq_dict,
    "ops.point_string_dict" => ops_point_string_dict,
    "ops.string_record_dict" => ops_string_record_dict,
    "ops.idempotent" => ops_idempotent,
    "ops.amd" => ops_amd,
    "ops.context" => ops_context,
    "ops.proxy" => ops_proxy,
    "ops.oneway" => ops_oneway,
    "opt.byte" => opt_byte,
    "opt.bool" => opt_bool,
    "opt.short" => opt_short,
    "opt.int" => opt_int,
    "opt.long" => opt_long,
    "opt.float" => opt_float,
    "opt.double" => opt_double,
    "opt.string" => opt_string,
    "opt.enum" => opt_enum,
    "opt.fixed_struct" => opt_fixed_struct,
    "opt.var_struct" => opt_var_struct,
    "opt.int_seq" => opt_int_seq,
    "opt.string_seq" => opt_string_seq,
    "opt.fixed_struct_seq" => opt_fixed_struct_seq,
    "opt.var_struct_seq" => opt_var_struct_seq,
    "opt.dict" => opt_dict,
    "opt.struct_dict" => opt_struct_dict,
    "opt.class" => opt_class,
    "opt.proxy" => opt_proxy,
    "opt.mixed" => opt_mixed,
    "opt.class_members_set" => opt_class_members_set,
    "opt.class_members_unset" => opt_class_members_unset,
    "opt.exception" => opt_exception,
    "obj.base" => obj_base,
    "obj.derived" => obj_derived,
    "obj.null" => obj_null,
    "obj.compact_id" => obj_compact_id,
    "obj.shared" => obj_shared,
    "obj.distinct" => obj_distinct,
    "obj.seq" => obj_seq,
    "obj.dict" => obj_dict,
    "obj.struct_member" => obj_struct_member,
    "obj.value" => obj_value,
    "obj.all_types" => obj_all_types,
    "obj.chain" => obj_chain,
    "obj.deep_chain" => obj_deep_chain,
    "obj.deep_chain_send" => obj_deep_chain_send,
    "obj.cycle_send" => obj_cycle_send,
    "obj.cycle_return" => obj_cycle_return,
    "obj.cycle_echo" => obj_cycle_echo,
    "obj.sliced_format" => obj_sliced_format,
    "exc.base" => exc_base,
    "exc.derived" => exc_derived,
    "exc.derived_declared" => exc_derived_declared,
    "exc.class_member" => exc_class_member,
    "exc.other" => exc_other,
    "exc.undeclared" => exc_undeclared,
    "exc.non_ice" => exc_non_ice,
    "exc.not_exist" => exc_not_exist,
    "exc.nothing" => exc_nothing,
    "exc.object_not_exist" => exc_object_not_exist,
    "exc.facet_not_exist" => exc_facet_not_exist,
    "exc.operation_not_exist" => exc_operation_not_exist,
    "exc.server_derived_compact" => exc_server_derived_compact,
    "exc.shape_error_compact" => exc_shape_error_compact,
    "sexc.server_derived" => sexc_server_derived,
    "sexc.server_base" => sexc_server_base,
    "sexc.server_class" => sexc_server_class,
    "sexc.shape_error" => sexc_shape_error,
    "sexc.isolated" => sexc_isolated,
    "sexc.known" => sexc_known,
    "sobj.circle" => sobj_circle,
    "sobj.ring" => sobj_ring,
    "sobj.compact_id" => sobj_compact_id,
    "sobj.unknown" => sobj_unknown,
    "sobj.linked" => sobj_linked,
    "sobj.seq" => sobj_seq,
    "sobj.dict" => sobj_dict,
    "sobj.preserved" => sobj_preserved,
    "sobj.not_preserved" => sobj_not_preserved,
    "sobj.known_derived" => sobj_known_derived,
    "sobj.unknown_optionals" => sobj_unknown_optionals,
    "cobj.circle" => cobj_circle,
    "cobj.unknown" => cobj_unknown,
    "cobj.circle_sliced" => cobj_circle_sliced,
    "cobj.known_derived" => cobj_known_derived,
    "relay.preserved" => api::relay_preserved,
    "relay.unpreserved" => api::relay_unpreserved,
    "facet.default" => api::facet_default,
    "facet.named" => api::facet_named,
    "facet.fallback" => api::facet_fallback,
    "facet.category_default" => api::facet_category_default,
    "facet.any_default" => api::facet_any_default,
    "loc.category" => api::loc_category,
    "loc.default_category" => api::loc_default_category,
    "loc.missing" => api::loc_missing,
    "loc.cookie" => api::loc_cookie,
    "loc.locate_user" => api::loc_locate_user,
    "loc.locate_not_exist" => api::loc_locate_not_exist,
    "loc.locate_local" => api::loc_locate_local,
    "loc.locate_other" => api::loc_locate_other,
    "loc.servant_user" => api::loc_servant_user,
    "loc.finished_user" => api::loc_finished_user,
    "loc.finished_not_exist" => api::loc_finished_not_exist,
    "loc.finished_local" => api::loc_finished_local,
    "loc.finished_other" => api::loc_finished_other,
    "loc.deactivate" => api::loc_deactivate,
    "vf.interface_by_value" => api::vf_interface_by_value,
    "vf.hooks_returned" => api::vf_hooks_returned,
    "vf.hooks_sent" => api::vf_hooks_sent,
    "cls.ops" => api::cls_ops,
    "cls.type_ids" => api::cls_type_ids,
    "cls.checked_cast" => api::cls_checked_cast,
    "bi.ping" => api::bi_ping,
    "bi.is_a" => api::bi_is_a,
    "bi.ids" => api::bi_ids,
    "deact.from_servant" => api::deact_from_servant,
    "optn.sent" => api::optn_sent,
    "optn.returned" => api::optn_returned,
    "info.endpoint" => api::info_endpoint,
}

/// Runs every check in the four configurations (see `super::CONFIGS`)
/// against a server of `server_kind` on `ports`.
pub async fn run(ports: super::Ports, server_kind: &str) -> Report {
    let super::Ports {
        port,
        cycles_port,
        facets_port,
    } = ports;
    let plain = Communicator::new();
    let props = Properties::new();
    props.set("Ice.AcceptClassCycles", "1");
    let cyc = Communicator::with_properties(props);
    let plain_relay = api::relay_proxy(&plain).await;
    let cyc_relay = api::relay_proxy(&cyc).await;
    let name = format!("floe client -> {} server", super::display(server_kind));
    let mut report = Report::new(&name);
    for &(config, enc10, cycles, objects_only) in super::CONFIGS {
        let communicator = if cycles { cyc.clone() } else { plain.clone() };
        let port = if cycles { cycles_port } else { port };
        let p = |name: &str| proxy(&communicator, port, enc10, name);
        let c = Ctx {
            ops: OperationsPrx::unchecked_cast(p("ops")),
            opt: OptionalsPrx::unchecked_cast(p("opt")),
            obj: ObjectsPrx::unchecked_cast(p("obj")),
            exc: ExceptionsPrx::unchecked_cast(p("exc")),
            sexc: SlicedExceptionsPrx::unchecked_cast(p("sexc")),
            sobj: SlicedObjectsPrx::unchecked_cast(p("sobj")),
            cobj: CompactObjectsPrx::unchecked_cast(p("cobj")),
            relaying: RelayingPrx::unchecked_cast(p("relaying")),
            vf: ValuesPrx::unchecked_cast(p("vf")),
            relay: RelayPrx::unchecked_cast(
                if cycles { &cyc_relay } else { &plain_relay }
                    .proxy()
                    .ice_encoding_version(if enc10 { ENCODING_1_0 } else { ENCODING_1_1 }),
            ),
            communicator,
            port,
            facets_port,
            enc10,
            cycles,
            server: server_kind.to_owned(),
        };
        for &check in CHECKS {
            if objects_only && !check.starts_with("obj.") {
                continue;
            }
            let outcome = run_check(check, &c).await.err().map(|f| f.0);
            report.record(&format!("{config}/{check}"), outcome);
        }
    }
    plain.destroy().await;
    cyc.destroy().await;
    report
}
