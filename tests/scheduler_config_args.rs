//! KubeSchedulerConfiguration plugin args as kube-scheduler reads them (issue 12 B10): each
//! field decoded with its upstream type — a wrong type is exit 2 naming the field (it used to
//! become 0 or the default without a word) — unknown fields refused, and upstream's
//! validation messages. Good args still give upstream's numbers (see also scheduler_cli's
//! config test and the fixture runner).

use std::process::{Command, Output};

fn schedule_with(config: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.yaml");
    std::fs::write(
        &cfg,
        format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{config}"
        ),
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_kexplore"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "schedule",
            "-f",
            "scenarios/seed-three-nodes.yaml",
            "--config",
        ])
        .arg(&cfg)
        .output()
        .expect("kexplore")
}

fn refused(config: &str, want: &str) {
    let out = schedule_with(config);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{config}\nstderr: {err}");
    assert!(err.contains(want), "{want:?} not in {err:?}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn wrongly_typed_args_exit_2_naming_the_field() {
    refused(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: \"5\"}\n",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: cannot unmarshal string into Go struct field InterPodAffinityArgs.hardPodAffinityWeight of type int32",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: \"3\"}]}}\n",
        "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: cannot unmarshal string",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {ignorePreferredTermsOfExistingPods: \"yes\"}\n",
        "args.ignorePreferredTermsOfExistingPods: cannot unmarshal string into Go struct field InterPodAffinityArgs.ignorePreferredTermsOfExistingPods of type bool",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultingType: List, defaultConstraints: [{maxSkew: one, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}\n",
        "profiles[0].pluginConfig[0].args.defaultConstraints[0]:",
    );
    refused(
        "profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: heavy}]\n",
        "profiles[0].plugins.score.enabled[0].weight: cannot unmarshal string into Go struct field Plugin.weight of type int32",
    );
    refused(
        "percentageOfNodesToScore: \"50\"\n",
        "percentageOfNodesToScore: cannot unmarshal string into Go struct field percentageOfNodesToScore of type int32",
    );
}

#[test]
fn upstream_validation_messages() {
    // ValidateInterPodAffinityArgs, validateResources, validateFunctionShape,
    // ValidateNodeResourcesBalancedAllocationArgs, validateDefaultingType: upstream's words.
    refused(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWeight: 101}\n",
        "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: LeastAllocated, resources: [{name: cpu, weight: 200}]}}\n",
        "args.scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu not in valid range (0, 100]",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: [{utilization: 100, score: 0}, {utilization: 0, score: 10}]}}}\n",
        "args.scoringStrategy.shape[1].utilization: Invalid value: 0: values must be sorted in increasing order",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Spread}}\n",
        "args.scoringStrategy.type: Unsupported value: \"Spread\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\"",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args: {resources: [{name: cpu, weight: 2}]}\n",
        "args.resources[0].weight: Invalid value: 2: must be 1",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args: {defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}\n",
        "args.defaultingType: Invalid value: \"System\": when .defaultConstraints are not empty",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args: {hardPodAffinityWieght: 2}\n",
        "strict decoding error: unknown field \"profiles[0].pluginConfig[0].args.hardPodAffinityWieght\"",
    );
    refused(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n  - name: InterPodAffinity\n",
        "profiles[0].pluginConfig[1]: Duplicate value: \"InterPodAffinity\"",
    );
}

#[test]
fn good_args_are_taken_with_upstreams_defaults() {
    // SetDefaults_NodeResourcesFitArgs: weight 0 is unset (1), no resources means cpu and
    // memory; the run goes on with the seed's pod on node-3.
    let out = schedule_with(
        "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: MostAllocated, resources: []}}\n  - name: InterPodAffinity\n    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: InterPodAffinityArgs, hardPodAffinityWeight: 0}\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Result: → node-3"));
}
