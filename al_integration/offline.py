"""Offline defaults for the whole product, applied once when any of our packages is imported.

Each setting stops a library from reaching the internet at import or run time; docs/offline.md says
why each one is needed. Values already in the environment win, so a user can opt back in.
"""

import os

OFFLINE_ENV = {
    # LiteLLM (imported by agentlightning) otherwise retries a cost-map download for ~5 s at import.
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    # No model weights or datasets from a hub at run time.
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    # tokenizers' thread pool does not survive the fork of agl's runner processes.
    "TOKENIZERS_PARALLELISM": "false",
    # Not offline, but machine-wide: OpenMP threads spin-wait by default, so on 2 cores any other busy
    # process (agl runners, the policy server) makes small torch steps 5-10x slower. Must precede torch.
    "OMP_WAIT_POLICY": "PASSIVE",
    # AgentOps (agl's default tracer) must never phone home, nor write agentops.log into the working directory.
    "AGENTOPS_API_KEY": "",
    "AGENTOPS_LOGGING_TO_FILE": "False",
    # ...nor print a cloud "Session Replay" link per rollout (INFO), nor one warning per runner that it cannot
    # wrap openai's streaming API, which agl 0.3.0's tracer does not need (WARNING): the traces live in our store.
    "AGENTOPS_LOG_LEVEL": "ERROR",
}


def apply_offline_defaults() -> None:
    for key, value in OFFLINE_ENV.items():
        os.environ.setdefault(key, value)
    _tldextract_offline()


def _tldextract_offline() -> None:
    """Presidio's email/URL recognizers call `tldextract.extract`, which fetches the public-suffix list.

    Swap the module's default extractor for one that only reads the snapshot bundled in the wheel.
    """
    try:
        import tldextract.tldextract as tld
    except ImportError:  # presidio not installed in this environment
        return
    if not getattr(tld.TLD_EXTRACTOR, "_offline", False):
        extractor = tld.TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)
        extractor._offline = True
        tld.TLD_EXTRACTOR = extractor
