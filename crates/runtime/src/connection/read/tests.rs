//! `ReadSize` and the header probes, on byte buffers.

use super::*;

#[test]
fn probe_frame_size_reads_only_plausible_headers() {
    let mut h = [0u8; HEADER_SIZE];
    h[..4].copy_from_slice(b"IceP");
    h[10..14].copy_from_slice(&500_014i32.to_le_bytes());
    assert_eq!(probe_frame_size(&h), Some(500_014));
    assert_eq!(probe_frame_size(&h[..HEADER_SIZE - 1]), None);
    h[10..14].copy_from_slice(&(-1i32).to_le_bytes());
    assert_eq!(probe_frame_size(&h), None);
    h[10..14].copy_from_slice(&3i32.to_le_bytes());
    assert_eq!(probe_frame_size(&h), None);
    h[0] = b'X';
    h[10..14].copy_from_slice(&100i32.to_le_bytes());
    assert_eq!(probe_frame_size(&h), None);
}

#[test]
fn only_oneway_and_batch_requests_wait_for_a_low_water_mark() {
    let frame = |kind: u8, compressed: u8, rid: i32| {
        let mut f = vec![0u8; HEADER_SIZE + 4];
        f[..4].copy_from_slice(b"IceP");
        f[4..8].copy_from_slice(&[1, 0, 1, 0]);
        f[8] = kind;
        f[9] = compressed;
        f[10..14].copy_from_slice(&1_000_000i32.to_le_bytes());
        f[14..18].copy_from_slice(&rid.to_le_bytes());
        f
    };
    assert!(is_oneway_request(&frame(0, 0, 0)));
    assert!(is_oneway_request(&frame(1, 0, 3)));
    assert!(!is_oneway_request(&frame(0, 0, 7)), "twoway request");
    assert!(!is_oneway_request(&frame(2, 0, 0)), "reply");
    assert!(
        !is_oneway_request(&frame(0, 2, 0)),
        "compressed: id unknown"
    );
    assert!(!is_oneway_request(&frame(0, 0, 0)[..HEADER_SIZE]));
    let mut size = ReadSize::new();
    size.need(&frame(0, 0, 0), 900_000, 0);
    assert!(size.oneway);
    size.need(&frame(0, 0, 5), 900_000, 0);
    assert!(!size.oneway);
}

/// One pass: a read (filling its room or not) and the frames it completed.
fn pass(size: &mut ReadSize, filled: bool, frames: &[usize]) -> usize {
    size.read(filled);
    for &f in frames {
        size.frame(f);
    }
    size.adapt();
    size.chunk()
}

#[test]
fn room_for_an_unchecked_frame_grows_with_what_arrived() {
    let mut size = ReadSize::new();
    // A 2 GiB claim without Ice.MessageSizeMax: 1 MiB of room, then
    // doubling with the bytes buffered.
    size.need(&[0; 14], i32::MAX as usize - 14, 0);
    assert_eq!(size.room_for(14), UNLIMITED_STEP + READ_SLACK);
    size.need(&vec![0; 3_000_000], i32::MAX as usize - 3_000_000, 0);
    assert_eq!(size.room_for(3_000_000), 3_000_000 + READ_SLACK);
    // The last piece: only what is missing.
    size.need(&vec![0; 5_000_000], 1_000, 0);
    assert_eq!(size.room_for(5_000_000), 1_000 + READ_SLACK);
    // With a limit the frame was checked against it: all of it at once.
    size.need(&[0; 14], 50_000_000, 100 << 20);
    assert_eq!(size.room_for(14), 50_000_000 + READ_SLACK);
}

#[test]
fn read_room_grows_while_small_frames_stream_in() {
    let mut size = ReadSize::new();
    assert_eq!(size.chunk(), READ_CHUNK);
    // 10 KB frames faster than they are read: every read fills its room.
    assert_eq!(pass(&mut size, true, &[10_000]), 4 * READ_CHUNK);
    assert_eq!(pass(&mut size, true, &[10_000; 6]), MAX_READ_CHUNK);
    assert_eq!(pass(&mut size, true, &[10_000; 26]), MAX_READ_CHUNK);
    // The reader caught up: the room shrinks step by step.
    assert_eq!(pass(&mut size, false, &[10_000; 3]), MAX_READ_CHUNK / 2);
    assert_eq!(pass(&mut size, false, &[10_000]), MAX_READ_CHUNK / 4);
    // A large frame: back to the base room at once.
    assert_eq!(pass(&mut size, true, &[100_000]), READ_CHUNK);
    // A read that filled its room with part of a frame only: no growth.
    assert_eq!(pass(&mut size, true, &[]), READ_CHUNK);
    // Request/reply traffic never fills the room.
    for _ in 0..10 {
        assert_eq!(pass(&mut size, false, &[60]), READ_CHUNK);
    }
}
