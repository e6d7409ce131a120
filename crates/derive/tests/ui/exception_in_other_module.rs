#[derive(Clone, Debug, Default, PartialEq, floe::Exception)]
#[floe(module = "Errors")]
pub struct Oops {
    pub reason: String,
}

#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self) -> Result<String, Oops>;
}

fn main() {}
