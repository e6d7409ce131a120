//! Runs one codec operation of the Bench.ice types `N` times, for counting
//! instructions with `valgrind --tool=callgrind` (this VM has no hardware
//! counters for `perf stat`): `codec_count OP N`, where OP is one of
//! `strdbl_encode`, `strdbl_decode`, `fixed_encode`, `fixed_decode`,
//! `floats_encode`, `floats_decode` (250,000 floats), `data_encode`,
//! `data_decode` (DataMessage 1 MB). Instructions per operation =
//! (count(N) − count(0)) / N.

use std::hint::black_box;

use floe_bench::*;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(op), Some(n)) = (
        args.first(),
        args.get(1).and_then(|n| n.parse::<usize>().ok()),
    ) else {
        eprintln!("usage: codec_count OP N");
        std::process::exit(2)
    };
    let strdbl = make_string_double_seq(50_000);
    let fixed = make_fixed_seq(50_000);
    let floats: Vec<f32> = (0..250_000).map(|i| i as f32).collect();
    let data = make_data_message(1_000_000);
    let enc_strdbl = encaps(|e| e.write(&strdbl[..]));
    let enc_fixed = encaps(|e| e.write(&fixed[..]));
    let enc_floats = encaps(|e| e.write(&floats[..]));
    let enc_data = encaps(|e| e.write(&data));
    for _ in 0..n {
        match op.as_str() {
            "strdbl_encode" => drop(black_box(encaps(|e| e.write(black_box(&strdbl[..]))))),
            "strdbl_decode" => {
                let v: Vec<StringDouble> = decoder(&enc_strdbl).read().expect("decodes");
                black_box(v);
            }
            "fixed_encode" => drop(black_box(encaps(|e| e.write(black_box(&fixed[..]))))),
            "fixed_decode" => {
                let v: Vec<Fixed> = decoder(&enc_fixed).read().expect("decodes");
                black_box(v);
            }
            "floats_encode" => drop(black_box(encaps(|e| e.write(black_box(&floats[..]))))),
            "floats_decode" => {
                let v: Vec<f32> = decoder(&enc_floats).read().expect("decodes");
                black_box(v);
            }
            "data_encode" => drop(black_box(encaps(|e| e.write(black_box(&data))))),
            "data_decode" => {
                let v: DataMessage = decoder(&enc_data).read().expect("decodes");
                black_box(v);
            }
            other => {
                eprintln!("codec_count: unknown OP `{other}`");
                std::process::exit(2)
            }
        }
    }
}
