//! The autoscaling group (upstream `pkg/registry/autoscaling` and `pkg/apis/autoscaling`):
//! HorizontalPodAutoscalers, stored as autoscaling/v2 and served as v2 and v1.

pub(crate) mod conversion_v1;
pub(crate) mod horizontalpodautoscaler;
pub(crate) mod validation;

pub(crate) const GROUP: &str = "autoscaling";
