#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self);
    async fn h_i(&self);
}

fn main() {}
