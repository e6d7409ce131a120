//! `floe_idl::Builder`: two `compile` calls into one directory that would
//! write the same generated file are refused; separate directories work.

use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write a Slice file");
}

#[test]
fn two_sets_sharing_a_file_need_their_own_directories() {
    let root = std::env::temp_dir().join(format!("floe-idl-builder-{}", std::process::id()));
    let slice = root.join("slice");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&slice).unwrap();
    write(
        &slice,
        "Shared.ice",
        "#pragma once\nmodule M { class Base { int b; } }\n",
    );
    write(
        &slice,
        "Server.ice",
        "#pragma once\n#include \"Shared.ice\"\nmodule M { class Server extends Base { int s; } }\n",
    );
    write(
        &slice,
        "Client.ice",
        "#pragma once\n#include \"Shared.ice\"\nmodule M { class Client extends Base { int c; } }\n",
    );
    let build = |out: &Path, file: &str| {
        std::fs::create_dir_all(out).unwrap();
        floe_idl::Builder::new()
            .quiet(true)
            .include(&slice)
            .out_dir(out)
            .compile(&[slice.join(file)])
    };
    let one = root.join("one");
    build(&one, "Server.ice").expect("the first set");
    // The same set again is fine.
    build(&one, "Server.ice").expect("the same set again");
    let err = build(&one, "Client.ice").expect_err("a second set into the same directory");
    let text = err.to_string();
    assert!(
        matches!(err, floe_idl::BuildError::Overwrite { .. }),
        "{text}"
    );
    assert!(
        text.contains("Shared.rs") || text.contains("slice.rs"),
        "{text}"
    );
    assert!(text.contains("out_dir"), "{text}");
    // Each set in its own directory.
    build(&root.join("client"), "Client.ice").expect("its own directory");
    let _ = std::fs::remove_dir_all(&root);
}
