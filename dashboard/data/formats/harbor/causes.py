"""Why a Harbor trial failed: its exception type mapped to a cause, read off Harbor 0.26's
error policy (harbor/models/trial/error_policy.py), which files each exception type name
under what it means for the trial: retried or not, graded or not, and whether its reward
is a valid measurement of the agent.

The policy's groups mix causes (a provider's rate limit and a bad request share one), so
the cause is named per type here: the sandbox (the environment never ran the agent), the
model provider (its API refused, failed or throttled), Harbor itself (its own files or
extras), the verifier (the tests did not give a reward), the agent's budget (time,
context or output exhausted), a refusal, the agent's own failure (a non-zero exit), a
cancellation, or unclassified (a type the policy does not know: Harbor grades it and
counts its reward). Only budget, refusal and the agent's own failure leave a valid
reward, as in the policy.

Must not: touch DuckDB, import Streamlit or Altair, or read files.
"""

from __future__ import annotations

from typing import Final

SANDBOX: Final = "sandbox"
MODEL_PROVIDER: Final = "model provider"
HARBOR_ITSELF: Final = "harbor"
VERIFIER: Final = "verifier"
BUDGET: Final = "budget"
REFUSAL: Final = "refusal"
AGENT: Final = "agent"
CANCELLED: Final = "cancelled"
UNCLASSIFIED: Final = "unclassified"

_CAUSES: Final[dict[str, tuple[str, ...]]] = {
    SANDBOX: (
        "EnvironmentStartTimeoutError", "SandboxBuildFailedError", "AgentSetupTimeoutError",
        "HealthcheckError", "SandboxLikelyOutOfMemoryError", "MemoryLimitExceededError",
        "SSHAccessError", "GKEExecStreamClosedError", "GKEPodNotFoundError",
        "RuntimeRequestError", "ServiceOperationsUnsupportedError", "VercelScopeError",
    ),
    MODEL_PROVIDER: (
        "ApiError", "ApiRateLimitError", "ApiInternalServerError", "ApiOverloadedError",
        "ApiConnectionClosedError", "ApiResponseStalledError", "UnknownApiError",
        "NetworkConnectionError", "ApiConnectionError", "ApiUsageLimitError", "RateLimitError",
        "InternalServerError", "ServiceUnavailableError", "APIConnectionError", "APIError",
        "Timeout", "UnsupportedModelParametersError", "BadRequestError",
        "UnprocessableEntityError", "UnsupportedParamsError", "APIResponseValidationError",
        "BudgetExceededError", "AgentAuthenticationError", "ModelNotFoundError",
        "ApiProviderResourceNotFoundError", "AuthenticationError", "PermissionDeniedError",
        "NotFoundError",
    ),
    HARBOR_ITSELF: (
        "AddTestsDirError", "DownloadVerifierDirError", "DspyImportError",
        "MissingExtraError", "RegradeError",
    ),
    VERIFIER: (
        "VerifierTimeoutError", "RewardFileNotFoundError", "RewardFileEmptyError",
        "VerifierOutputParseError",
    ),
    BUDGET: (
        "AgentTimeoutError", "ContextWindowExceededError", "OutputTokenExceededError",
        "ContextLengthExceededError", "OutputLengthExceededError",
    ),
    REFUSAL: ("AgentSafetyRefusalError", "ContentPolicyViolationError"),
    AGENT: ("NonZeroAgentExitCodeError",),
    CANCELLED: ("CancelledError",),
}  # fmt: skip
CAUSE_OF: Final = {name: cause for cause, names in _CAUSES.items() for name in names}
# The causes whose reward Harbor 0.26's policy counts (has_valid_reward), unclassified too.
VALID_REWARD_CAUSES: Final = frozenset({BUDGET, REFUSAL, AGENT, UNCLASSIFIED})
CAUSE_ORDER: Final = (
    SANDBOX, MODEL_PROVIDER, HARBOR_ITSELF, VERIFIER, BUDGET, REFUSAL, AGENT, CANCELLED,
    UNCLASSIFIED,
)  # fmt: skip


def cause_of(exception_type: str) -> str:
    """The failure cause of an exception type name (unclassified when the policy has none)."""
    return CAUSE_OF.get(exception_type, UNCLASSIFIED)
