//! The Ice <-> Ice references every floe direction is compared with, and
//! the comparison: with the Ice 3.7 peers ([`reference`]) and across Ice
//! 3.7 and Ice 3.8 ([`reference38`]).

use std::collections::BTreeSet;
use std::sync::OnceLock;
use std::thread;

use super::{
    cpp_peers, run_cpp_client, run_python_client, start_cpp_server, start_python_server, Python,
    Report,
};

/// The Ice <-> Ice runs every floe direction is compared with.
pub struct Reference {
    /// The Python client against the C++ server.
    pub python_to_cpp: Report,
    /// The C++ client against the Python server.
    pub cpp_to_python: Report,
}

/// Runs the suite between the Ice peers (once per test process): Python
/// client -> C++ server and C++ client -> Python server. Blocking.
pub fn reference() -> &'static Reference {
    static REFERENCE: OnceLock<Reference> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        cpp_peers();
        let cpp = start_cpp_server();
        let ice37 = Python::ice37();
        let python = start_python_server(&ice37);
        let (cpp_ports, python_ports) = (cpp.ports(), python.ports());
        let (python_to_cpp, cpp_to_python) = thread::scope(|s| {
            let a = s.spawn(|| run_python_client(&ice37, cpp_ports, "cpp"));
            let b = s.spawn(|| run_cpp_client(python_ports, "python"));
            (
                a.join().expect("python client thread"),
                b.join().expect("C++ client thread"),
            )
        });
        Reference {
            python_to_cpp,
            cpp_to_python,
        }
    })
}

/// The Ice <-> Ice runs across Ice 3.7 and Ice 3.8 that the floe
/// directions with the Ice 3.8 Python peer are compared with.
pub struct Reference38 {
    /// The Ice 3.8 Python client against the Ice 3.7 C++ server.
    pub python38_to_cpp: Report,
    /// The Ice 3.7 C++ client against the Ice 3.8 Python server.
    pub cpp_to_python38: Report,
    /// The Ice 3.8 Python client against the Ice 3.8 Python server: what
    /// Ice 3.8 itself does with the checks (see `ice38.rs`'s `EXCLUDED`).
    pub python38_to_python38: Report,
}

/// Runs the suite between the Ice peers across versions (once per test
/// process), the three clients at once: Ice 3.8 Python client -> Ice 3.7
/// C++ server, Ice 3.7 C++ client -> Ice 3.8 Python server, and Ice 3.8
/// Python client -> Ice 3.8 Python server. Blocking.
pub fn reference38(ice38: &Python) -> &'static Reference38 {
    static REFERENCE: OnceLock<Reference38> = OnceLock::new();
    REFERENCE.get_or_init(|| {
        cpp_peers();
        let cpp = start_cpp_server();
        let python = start_python_server(ice38);
        let (cpp_ports, python_ports) = (cpp.ports(), python.ports());
        let kind = ice38.kind;
        thread::scope(|s| {
            let a = s.spawn(|| run_python_client(ice38, cpp_ports, "cpp"));
            let b = s.spawn(|| run_cpp_client(python_ports, kind));
            let c = s.spawn(|| run_python_client(ice38, python_ports, kind));
            Reference38 {
                python38_to_cpp: a.join().expect("Python 3.8 client thread"),
                cpp_to_python38: b.join().expect("C++ client thread"),
                python38_to_python38: c.join().expect("Python 3.8 client thread"),
            }
        })
    })
}

/// Compares a direction with floe on one side with the Ice <-> Ice run
/// sharing its Ice peer: every check that passed there must pass here,
/// except the `known` floe gaps, which must still fail (so that a fix, or
/// a new failure, is noticed). Prints `N passed, M failed`.
pub fn compare(report: &Report, reference: &Report, known: &[&str]) {
    report.assert_complete();
    reference.assert_complete();
    report.print();
    let passed_in_reference: BTreeSet<String> = reference
        .results
        .iter()
        .filter(|(_, f)| f.is_none())
        .map(|(l, _)| l.clone())
        .collect();
    let failed = report.failed();
    let reference_failed = reference.failed();
    if !reference_failed.is_empty() {
        println!(
            "  not required ({} failed between Ice peers): {reference_failed:?}",
            reference.name
        );
    }
    let regressions: BTreeSet<&String> = failed.intersection(&passed_in_reference).collect();
    let known: BTreeSet<String> = known.iter().map(|k| (*k).to_owned()).collect();
    let new: Vec<&&String> = regressions
        .iter()
        .filter(|l| !known.contains(**l))
        .collect();
    let fixed: Vec<&String> = known.iter().filter(|k| !failed.contains(*k)).collect();
    if !known.is_empty() {
        println!(
            "  {} known floe gap(s) still failing, listed in KNOWN_GAPS",
            known.len() - fixed.len()
        );
    }
    assert!(
        new.is_empty() && fixed.is_empty(),
        "{}: compared with {} (the Ice <-> Ice reference):\n\
         checks that pass between Ice peers but fail with floe, not listed as known gaps: {new:?}\n\
         known gaps that now pass (remove them from KNOWN_GAPS): {fixed:?}",
        report.name,
        reference.name
    );
}
