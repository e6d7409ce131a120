//! The `ops` and `opt` servants: operations on built-in types, sequences,
//! dictionaries and contexts; optional parameters and members.
//! A child of `floe_server`, whose helpers it uses.

use super::*;

pub(super) struct OperationsI {
    pub(super) last: AtomicI32,
}

macro_rules! seq_ops {
    ($($name:ident -> $r:ident: $t:ty,)*) => {$(
        async fn $name(&self, p1: Vec<$t>, _: &Current) -> Res<$r> {
            Ok((reversed(&p1), p1).into())
        }
    )*};
}

macro_rules! dict_ops {
    ($($name:ident -> $r:ident: $k:ty => $v:ty,)*) => {$(
        async fn $name(
            &self,
            p1: BTreeMap<$k, $v>,
            p2: BTreeMap<$k, $v>,
            _: &Current,
        ) -> Res<$r> {
            Ok((merged(&p1, p2), p1).into())
        }
    )*};
}

impl Operations for OperationsI {
    async fn op_void(&self, _: &Current) -> Res<()> {
        Ok(())
    }
    async fn op_byte(&self, p1: u8, p2: u8, _: &Current) -> Res<OperationsOpByteResult> {
        Ok((p1, p2).into())
    }
    async fn op_bool(&self, p1: bool, p2: bool, _: &Current) -> Res<OperationsOpBoolResult> {
        Ok((p1, p2).into())
    }
    async fn op_short_int_long(
        &self,
        p1: i16,
        p2: i32,
        p3: i64,
        _: &Current,
    ) -> Res<OperationsOpShortIntLongResult> {
        Ok((p3, p1, p2, p3).into())
    }
    async fn op_float_double(
        &self,
        p1: f32,
        p2: f64,
        _: &Current,
    ) -> Res<OperationsOpFloatDoubleResult> {
        Ok((p2, p1, p2).into())
    }
    async fn op_string(
        &self,
        p1: String,
        p2: String,
        _: &Current,
    ) -> Res<OperationsOpStringResult> {
        Ok((format!("{p1}{p2}"), format!("{p2}{p1}")).into())
    }
    async fn op_enum(&self, p1: Color, p2: Level, _: &Current) -> Res<OperationsOpEnumResult> {
        Ok((p1, p2).into())
    }
    async fn op_struct(&self, p1: Point, p2: Record, _: &Current) -> Res<OperationsOpStructResult> {
        Ok((p1, p2).into())
    }
    async fn op_nested(&self, p1: Nested, _: &Current) -> Res<OperationsOpNestedResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_defaults(&self, _: &Current) -> Res<Defaults> {
        Ok(Defaults::default())
    }
    async fn op_default_record(&self, _: &Current) -> Res<Record> {
        Ok(Record::default())
    }
    seq_ops! {
        op_bool_seq -> OperationsOpBoolSeqResult: bool,
        op_short_seq -> OperationsOpShortSeqResult: i16,
        op_int_seq -> OperationsOpIntSeqResult: i32,
        op_long_seq -> OperationsOpLongSeqResult: i64,
        op_float_seq -> OperationsOpFloatSeqResult: f32,
        op_double_seq -> OperationsOpDoubleSeqResult: f64,
        op_string_seq -> OperationsOpStringSeqResult: String,
        op_color_seq -> OperationsOpColorSeqResult: Color,
        op_point_seq -> OperationsOpPointSeqResult: Point,
        op_record_seq -> OperationsOpRecordSeqResult: Record,
        op_int_seq_seq -> OperationsOpIntSeqSeqResult: Vec<i32>,
        op_string_seq_seq -> OperationsOpStringSeqSeqResult: Vec<String>,
    }
    async fn op_byte_seq(
        &self,
        p1: floe::codegen::Bytes,
        _: &Current,
    ) -> Res<OperationsOpByteSeqResult> {
        Ok((reversed(&p1).into(), p1).into())
    }
    dict_ops! {
        op_byte_bool_dict -> OperationsOpByteBoolDictResult: u8 => bool,
        op_short_int_dict -> OperationsOpShortIntDictResult: i16 => i32,
        op_long_float_dict -> OperationsOpLongFloatDictResult: i64 => f32,
        op_int_double_dict -> OperationsOpIntDoubleDictResult: i32 => f64,
        op_string_string_dict -> OperationsOpStringStringDictResult: String => String,
        op_string_color_dict -> OperationsOpStringColorDictResult: String => Color,
        op_color_string_dict -> OperationsOpColorStringDictResult: Color => String,
        op_string_int_seq_dict -> OperationsOpStringIntSeqDictResult: String => Vec<i32>,
        op_point_string_dict -> OperationsOpPointStringDictResult: Point => String,
        op_string_record_dict -> OperationsOpStringRecordDictResult: String => Record,
    }
    async fn op_idempotent(&self, p: i32, _: &Current) -> Res<i32> {
        Ok(p + 1)
    }
    async fn op_amd(&self, s: String, _: &Current) -> Res<String> {
        Ok(format!("amd:{s}"))
    }
    async fn op_context(&self, current: &Current) -> Res<BTreeMap<String, String>> {
        Ok(current.ctx.clone())
    }
    async fn op_proxy(
        &self,
        p1: Option<OperationsPrx>,
        _: &Current,
    ) -> Res<OperationsOpProxyResult> {
        let p2 = p1.clone().map(OperationsPrx::into_proxy);
        Ok((p1, p2).into())
    }
    async fn op_oneway_set(&self, v: i32, _: &Current) -> Res<()> {
        self.last.store(v, Ordering::SeqCst);
        Ok(())
    }
    async fn op_oneway_get(&self, _: &Current) -> Res<i32> {
        Ok(self.last.load(Ordering::SeqCst))
    }
}

pub(super) struct OptionalsI;

macro_rules! opt_ops {
    ($($name:ident -> $r:ident: $t:ty,)*) => {$(
        async fn $name(&self, p1: Option<$t>, _: &Current) -> Res<$r> {
            Ok((p1.clone(), p1).into())
        }
    )*};
}

impl Optionals for OptionalsI {
    opt_ops! {
        op_opt_byte -> OptionalsOpOptByteResult: u8,
        op_opt_bool -> OptionalsOpOptBoolResult: bool,
        op_opt_short -> OptionalsOpOptShortResult: i16,
        op_opt_int -> OptionalsOpOptIntResult: i32,
        op_opt_long -> OptionalsOpOptLongResult: i64,
        op_opt_float -> OptionalsOpOptFloatResult: f32,
        op_opt_double -> OptionalsOpOptDoubleResult: f64,
        op_opt_string -> OptionalsOpOptStringResult: String,
        op_opt_color -> OptionalsOpOptColorResult: Color,
        op_opt_point -> OptionalsOpOptPointResult: Point,
        op_opt_record -> OptionalsOpOptRecordResult: Record,
        op_opt_int_seq -> OptionalsOpOptIntSeqResult: Vec<i32>,
        op_opt_string_seq -> OptionalsOpOptStringSeqResult: Vec<String>,
        op_opt_point_seq -> OptionalsOpOptPointSeqResult: Vec<Point>,
        op_opt_record_seq -> OptionalsOpOptRecordSeqResult: Vec<Record>,
        op_opt_short_int_dict -> OptionalsOpOptShortIntDictResult: BTreeMap<i16, i32>,
        op_opt_string_record_dict -> OptionalsOpOptStringRecordDictResult: BTreeMap<String, Record>,
    }
    // Optional proxies and class references are one `Option`.
    async fn op_opt_base(&self, p1: Shared<Base>, _: &Current) -> Res<OptionalsOpOptBaseResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_opt_proxy(
        &self,
        p1: Option<OperationsPrx>,
        _: &Current,
    ) -> Res<OptionalsOpOptProxyResult> {
        Ok((p1.clone(), p1).into())
    }
    async fn op_mixed(
        &self,
        s: Option<String>,
        a: i32,
        i: Option<i32>,
        _: &Current,
    ) -> Res<OptionalsOpMixedResult> {
        Ok((a, s, a + 1, i).into())
    }
    async fn op_with_optionals(
        &self,
        w: Shared<WithOptionals>,
        _: &Current,
    ) -> Res<Shared<WithOptionals>> {
        Ok(w)
    }
    async fn op_opt_error(
        &self,
        req: i32,
        i: Option<i32>,
        s: Option<String>,
        _: &Current,
    ) -> UserRes {
        Err(OptError { req, i, s }.into())
    }
}
