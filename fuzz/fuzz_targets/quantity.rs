//! Any text as a resource.Quantity ("100m", "1.5Gi", "1e3", "-0.0001Ki", ...): parsing and every
//! conversion must return a value or an error, never panic or overflow.
#![no_main]

use kexplore::scheduler::quantity::{Quantity, resource_value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(q) = Quantity::parse(text) {
        let _ = q.value();
        let _ = q.milli_value();
    }
    for resource in ["cpu", "memory", "ephemeral-storage", "pods", "nvidia.com/gpu"] {
        let _ = resource_value(resource, text);
    }
});
