#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi(&self, out1: i32) -> (String, i32);
}

fn main() {}
