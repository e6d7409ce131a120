//! Hand-written encoding of the Bench.ice types shared by `bench_server`
//! and `bench_client` (the code generator will replace this).

#![allow(dead_code)]

use bytes::Bytes;
use floe::wire::{Decoder, Encoder, Result};

/// `Bench::Fixed`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fixed {
    pub i: i32,
    pub j: i32,
    pub d: f64,
}

/// `Bench::StringDouble`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StringDouble {
    pub s: String,
    pub d: f64,
}

/// `Bench::SignalData`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SignalData {
    pub name: String,
    pub samples: Vec<f32>,
}

/// `Bench::DataMessage`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DataMessage {
    pub name: String,
    pub id: i32,
    pub signal_count: i32,
    pub sample_count: i32,
    pub times: Vec<f32>,
    pub signals: Vec<SignalData>,
}

pub fn write_fixed_seq(enc: &mut Encoder, v: &[Fixed]) {
    enc.write_size(v.len());
    let buf = enc.buffer_mut();
    buf.reserve(v.len() * 16);
    for f in v {
        buf.extend_from_slice(&f.i.to_le_bytes());
        buf.extend_from_slice(&f.j.to_le_bytes());
        buf.extend_from_slice(&f.d.to_le_bytes());
    }
}

pub fn read_fixed_seq(dec: &mut Decoder) -> Result<Vec<Fixed>> {
    let n = dec.read_count(16)?;
    let raw = dec.read_bytes(n * 16)?;
    Ok(raw
        .chunks_exact(16)
        .map(|c| Fixed {
            i: i32::from_le_bytes([c[0], c[1], c[2], c[3]]),
            j: i32::from_le_bytes([c[4], c[5], c[6], c[7]]),
            d: f64::from_le_bytes([c[8], c[9], c[10], c[11], c[12], c[13], c[14], c[15]]),
        })
        .collect())
}

pub fn write_string_double_seq(enc: &mut Encoder, v: &[StringDouble]) {
    enc.write_size(v.len());
    for x in v {
        enc.write_string(&x.s);
        enc.write_f64(x.d);
    }
}

pub fn read_string_double_seq(dec: &mut Decoder) -> Result<Vec<StringDouble>> {
    let n = dec.read_count(9)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let s = dec.read_string()?;
        let d = dec.read_f64()?;
        v.push(StringDouble { s, d });
    }
    Ok(v)
}

pub fn write_float_seq(enc: &mut Encoder, v: &[f32]) {
    enc.write_size(v.len());
    let buf = enc.buffer_mut();
    buf.reserve(v.len() * 4);
    for f in v {
        buf.extend_from_slice(&f.to_le_bytes());
    }
}

pub fn read_float_seq(dec: &mut Decoder) -> Result<Vec<f32>> {
    let n = dec.read_count(4)?;
    let raw = dec.read_bytes(n * 4)?;
    Ok(raw
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

pub fn write_data_message(enc: &mut Encoder, m: &DataMessage) {
    enc.write_string(&m.name);
    enc.write_i32(m.id);
    enc.write_i32(m.signal_count);
    enc.write_i32(m.sample_count);
    write_float_seq(enc, &m.times);
    enc.write_size(m.signals.len());
    for s in &m.signals {
        enc.write_string(&s.name);
        write_float_seq(enc, &s.samples);
    }
}

pub fn read_data_message(dec: &mut Decoder) -> Result<DataMessage> {
    let name = dec.read_string()?;
    let id = dec.read_i32()?;
    let signal_count = dec.read_i32()?;
    let sample_count = dec.read_i32()?;
    let times = read_float_seq(dec)?;
    let n = dec.read_count(2)?;
    let mut signals = Vec::with_capacity(n);
    for _ in 0..n {
        let name = dec.read_string()?;
        let samples = read_float_seq(dec)?;
        signals.push(SignalData { name, samples });
    }
    Ok(DataMessage {
        name,
        id,
        signal_count,
        sample_count,
        times,
        signals,
    })
}

/// A DataMessage of about `size` bytes: `size / 400` signals of 100 samples.
pub fn make_data_message(size: usize) -> DataMessage {
    let signals = (size / 400).max(1);
    DataMessage {
        name: "codac".into(),
        id: 1,
        signal_count: signals as i32,
        sample_count: 100,
        times: (0..100).map(|i| i as f32).collect(),
        signals: (0..signals)
            .map(|s| SignalData {
                name: format!("signal{s}"),
                samples: (0..100).map(|i| (s * 100 + i) as f32).collect(),
            })
            .collect(),
    }
}

/// A `Bytes` holding `n` bytes of a repeating pattern.
pub fn pattern(n: usize) -> Bytes {
    Bytes::from((0..n).map(|i| i as u8).collect::<Vec<u8>>())
}

/// Picks the tokio runtime: `--current-thread` selects the current-thread
/// runtime, the default is the multi-thread runtime (see the bench client's
/// docs for why).
pub fn build_runtime(current_thread: bool) -> tokio::runtime::Runtime {
    if current_thread {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("cannot build the tokio runtime")
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("cannot build the tokio runtime")
    }
}
