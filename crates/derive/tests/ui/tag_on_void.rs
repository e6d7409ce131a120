#[floe::interface(module = "M")]
pub trait Hello {
    #[floe(tag = 1)]
    async fn hi(&self);
}

fn main() {}
