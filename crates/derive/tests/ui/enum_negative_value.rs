#[derive(Clone, Copy, Debug, PartialEq, floe::Enum)]
#[floe(module = "M")]
pub enum Level {
    Low = -1,
    High = 1,
}

fn main() {}
