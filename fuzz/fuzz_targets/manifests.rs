//! Any text as the manifests `kexplore schedule -f` reads (YAML, multi-document, `kind: List`,
//! JSON): parsing into nodes and pods must return a value or an error, and when it parses, one
//! full simulation (every pending pod through one scheduling cycle, as `schedule` runs it) must
//! finish without panicking. Input is bounded (64 KiB) so a case stays a fraction of a second.
#![no_main]

use kexplore::scheduler::manifests::Manifests;
use kexplore::scheduler::{Scheduler, simulate, version, world};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut m = Manifests::default();
    if m.add_text("fuzz.yaml", text).is_err() {
        return;
    }
    // Bound the work of one case: the simulation is O(pods x nodes).
    if m.nodes.len() > 64 || m.pods.len() > 64 {
        return;
    }
    let Ok(w) = world::build(&m, version::NEWEST) else {
        return;
    };
    let mut snapshot = w.snapshot;
    let mut scheduler = Scheduler::new(version::NEWEST, None, 1);
    let _ = simulate(&mut scheduler, &mut snapshot, w.pending);
});
