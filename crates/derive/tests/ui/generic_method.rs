#[floe::interface(module = "M")]
pub trait Hello {
    async fn hi<T>(&self, x: i32) -> String;
}

fn main() {}
