"""Stage: the fast rollout policy from human games (`engine-train rollout`)."""
