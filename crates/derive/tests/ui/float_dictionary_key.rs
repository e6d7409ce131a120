use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Weights {
    pub by_value: BTreeMap<i64, f64>,
    pub bad: BTreeMap<Vec<i32>, i32>,
}

fn main() {}
