//! A pure, deterministic simulation of kube-scheduler (see ../shared/specs/scheduler.md).
