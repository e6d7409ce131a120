#[derive(Clone, Debug, Default, PartialEq, floe::Struct)]
#[floe(module = "M")]
pub struct Named {
    pub name: &'static str,
}

fn main() {}
