//! Any bytes as a kubeconfig: parsing, merging and resolving every context must return a value
//! or an error, never panic, hang or allocate without bound.
#![no_main]

use kexplore::kubeconfig::Kubeconfig;
use kexplore::kubeconfig::load::parse;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("/nonexistent/fuzz/config");
    if let Ok(config) = parse(path, data) {
        let merged = Kubeconfig::merge(vec![(path.to_path_buf(), Some(config))]);
        let _ = merged.to_config();
        for name in merged.context_names() {
            if let Ok(ctx) = merged.resolve(Some(&name)) {
                let _ = kexplore::pki::inspect_at(&ctx, 1_800_000_000);
            }
        }
    }
});
