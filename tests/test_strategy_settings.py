"""Each named strategy is built from its own typed settings (``logic_rag.strategy_settings``):
they check themselves when made, write and read the one serialisation rule
(``{"type", "init_parameters"}``), and reach the retriever's searches."""

from __future__ import annotations

import json
import warnings
from dataclasses import fields

import pytest

from logic_rag.strategies import STRATEGIES, pipeline_of
from logic_rag.strategy_settings import (
    EvidenceSettings,
    FusionSettings,
    LLMRerankSettings,
    LogicSettings,
    QualitySettings,
    RerankSettings,
    SetopsSettings,
    StrategySettings,
    VanillaSettings,
    VerifySettings,
)

#: A value away from the default for every settings field (valid values; nothing loads).
CHANGES = {
    "candidates": 50,
    "truth_weight": 0.6,
    "positive_prior": 0.3,
    "cosine_weight": 0.2,
    "tnorm": "godel",
    "negation_weight": 0.5,
    "atom_candidates": 10,
    "verifier": "llm:qwen2.5-1.5b",
    "verifier_atoms": "negated",
    "verifier_top": 20,
    "verifier_weight": 0.5,
    "bounds": "calibrated",
    "max_calls": 7,
    "pool": 30,
    "delta": 0.2,
    "thresholds": "sample.json",
    "cheap": "cross-encoder:some-folder",
    "whole_query": True,
    "top": 9,
    "llm_deadline_s": 5.0,
}
EVIDENCE = EvidenceSettings(atom_depth=200, threshold_rank=10, temperature=0.2, passage_weight=0.3)
LOGIC = LogicSettings(
    min_confidence=0.2,
    exclude_violations=0.7,
    exclusion_mode="drop",
    verdict_calibration="calibration.json",
)


def changed(name: str) -> StrategySettings:
    """Strategy ``name``'s settings with every field away from its default."""
    cls = STRATEGIES[name].settings
    groups = {"evidence": EVIDENCE, "logic": LOGIC}
    return cls(
        **{f.name: groups[f.name] if f.name in groups else CHANGES[f.name] for f in fields(cls)}
    )


def _flat(settings: StrategySettings) -> dict[str, tuple[type, object]]:
    """Every value of ``settings``, groups flattened: name -> (class it sits in, value)."""
    out: dict[str, tuple[type, object]] = {}
    for f in fields(settings):
        value = getattr(settings, f.name)
        if isinstance(value, StrategySettings):
            out.update(_flat(value))
        else:
            out[f.name] = (type(settings), value)
    return out


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_field_reaches_the_pipeline_or_the_retriever(name):
    settings = changed(name)
    default = _flat(STRATEGIES[name].settings())
    for field_name, (owner, value) in _flat(settings).items():
        assert value != default[field_name][1], (name, field_name, owner)
    assert pipeline_of(name).to_dict() == pipeline_of(name, STRATEGIES[name].settings()).to_dict()


@pytest.mark.parametrize("which", ["default", "changed"])
@pytest.mark.parametrize("name", STRATEGIES)
def test_settings_round_trip_as_plain_json(name, which):
    settings = STRATEGIES[name].settings() if which == "default" else changed(name)
    written = settings.to_dict()
    assert written["type"] == f"logic_rag.strategy_settings.{type(settings).__name__}"
    text = json.dumps(written, allow_nan=False)
    again = type(settings).from_dict(json.loads(text))
    assert again == settings
    assert type(settings).from_dict(written["init_parameters"]) == settings  # plain fields
    assert type(settings).from_dict({}) == type(settings)()  # missing fields: defaults


def test_a_verifier_object_has_no_json_form():
    from logic_rag.verifiers.llm import LLMVerifier

    class Generator:
        name = "mine"

    settings = VerifySettings(verifier=LLMVerifier(generator=Generator()))
    with pytest.raises(TypeError, match="VerifySettings.verifier.*spec string"):
        settings.to_dict()


def test_a_verifier_object_is_written_by_the_one_rule():
    """Its spec when one describes it, else its type and parameters; only the library's
    allow-listed verifiers are built from a dict."""
    from logic_rag.verifiers.llm import LLMVerifier
    from tests.verifier_doubles import KeywordVerifier

    plain = VerifySettings(verifier=LLMVerifier(generator="qwen2.5-1.5b"))
    assert plain.to_dict()["init_parameters"]["verifier"] == "llm:qwen2.5-1.5b"
    odd = VerifySettings(verifier=LLMVerifier(generator="qwen2.5-1.5b", max_chars=400))
    written = odd.to_dict()["init_parameters"]["verifier"]
    assert written["type"] == "logic_rag.verifiers.llm.LLMVerifier"
    assert VerifySettings.from_dict(json.loads(json.dumps(odd.to_dict()))) == odd
    foreign = VerifySettings(verifier=KeywordVerifier()).to_dict()
    assert (
        foreign["init_parameters"]["verifier"]["type"] == "tests.verifier_doubles.KeywordVerifier"
    )
    with pytest.raises(ValueError, match="KeywordVerifier.*pass it again"):
        VerifySettings.from_dict(foreign)
    with pytest.raises(ValueError, match="got a 'logic_rag.strategy_settings.RerankSettings'"):
        VerifySettings.from_dict(RerankSettings().to_dict())


def test_from_dict_refuses_unknown_fields_and_non_dicts():
    with pytest.raises(ValueError, match="unknown VerifySettings field.*verify_weight"):
        VerifySettings.from_dict({"verify_weight": 0.5})
    with pytest.raises(ValueError, match="unknown EvidenceSettings field.*depth"):
        RerankSettings.from_dict({"evidence": {"depth": 3}})
    with pytest.raises(TypeError, match="takes a dict"):
        RerankSettings.from_dict([("candidates", 3)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: EvidenceSettings(temperature=0), "temperature"),
        (lambda: RerankSettings(evidence=EvidenceSettings(threshold_rank=0)), "threshold_rank"),
        (lambda: RerankSettings(candidates=0), "candidates must be >= 1"),
        (lambda: RerankSettings(positive_prior=1.5), "positive_prior"),
        (lambda: VerifySettings(verifier="bogus"), "unknown verifier 'bogus'"),
        (lambda: VerifySettings(verifier_top=0), "verifier_top"),
        (lambda: VerifySettings(verifier_weight=1.5), "verifier_weight"),
        (lambda: VerifySettings(verifier_atoms="some"), "verifier_atoms"),
        (lambda: VerifySettings(atom_candidates=-1), "atom_candidates must be >= 0"),
        (lambda: VerifySettings(llm_deadline_s=0), "llm_deadline_s must be a positive"),
        (lambda: QualitySettings(bounds="calibrated"), "quality settings: .*thresholds"),
        (lambda: QualitySettings(delta=2.0), "quality settings: delta"),
        (lambda: QualitySettings(pool=0), "pool must be >= 1"),
        (lambda: QualitySettings(cheap="bogus"), "unknown verifier 'bogus'"),
        (lambda: LLMRerankSettings(top=0), "top must be >= 1"),
        (lambda: LogicSettings(exclude_violations=1.5), "exclude_violations"),
        (lambda: LogicSettings(exclusion_mode="hide"), "exclusion_mode"),
    ],
)
def test_a_bad_value_fails_at_construction(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_groups_are_typed_and_settings_belong_to_their_strategy():
    with pytest.raises(TypeError, match="RerankSettings.evidence must be a EvidenceSettings"):
        RerankSettings(evidence={"atom_depth": 3})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="strategy 'verify' takes VerifySettings"):
        pipeline_of("verify", RerankSettings())
    with pytest.raises(ValueError, match="unknown strategy 'magic'"):
        pipeline_of("magic", VanillaSettings())


def test_settings_are_keyword_only_and_frozen():
    with pytest.raises(TypeError):
        SetopsSettings(50)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        SetopsSettings().candidates = 3  # type: ignore[misc]


def test_exclusion_comes_from_the_logic_group():
    from logic_rag.pipeline.exclusion import ExcludeViolations

    settings = RerankSettings(logic=LogicSettings(exclude_violations=0.6, exclusion_mode="drop"))
    assert ExcludeViolations(0.6, "drop") in list(pipeline_of("rerank", settings))
    assert not any(isinstance(s, ExcludeViolations) for s in pipeline_of("rerank"))


# ---------------------------------------------------------------- the retriever's entry points
QUERY = "Italian crime films that are not 1970s films"


def _ids(hits):
    return [(h.id, round(h.score, 6)) for h in hits]


def test_settings_reach_only_their_strategy(small_logic_retriever):
    from logic_rag.logic_retriever import LogicRetriever

    base = small_logic_retriever
    new = base.with_settings(
        VerifySettings(truth_weight=0.3, positive_prior=0.2, atom_candidates=5)
    )
    assert _ids(new.search(QUERY, k=10, strategy="verify")) != _ids(
        base.search(QUERY, k=10, strategy="verify")
    )
    # other strategies keep their defaults; the retriever's own strategy is unchanged
    assert new.strategy == base.strategy == "rerank"
    assert new.settings_for("rerank") == RerankSettings()
    assert _ids(new.search(QUERY, k=10)) == _ids(base.search(QUERY, k=10))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new form warns about nothing
        made = LogicRetriever(
            base.dense,
            passages=base.passages,
            strategy="verify",
            settings=VerifySettings(truth_weight=0.3, positive_prior=0.2, atom_candidates=5),
        )
        assert _ids(made.search(QUERY, k=10)) == _ids(new.search(QUERY, k=10, strategy="verify"))
        assert made.describe()["settings"]["init_parameters"]["truth_weight"] == 0.3


def test_with_settings_keeps_each_class(small_logic_retriever):
    both = small_logic_retriever.with_settings(
        FusionSettings(negation_weight=0.5), RerankSettings(candidates=20)
    )
    assert both.settings_for("fusion") == both.settings_for("fusion-product")
    assert both.settings_for("fusion").negation_weight == 0.5
    assert both.settings_for("rerank").candidates == 20
    assert small_logic_retriever.settings_for("rerank").candidates == 100  # unchanged
    switched = small_logic_retriever.with_settings(VerifySettings(), strategy="verify")
    assert switched.strategy == "verify"
    with pytest.raises(TypeError, match="strategy 'verify' takes VerifySettings"):
        small_logic_retriever.with_settings(RerankSettings(), strategy="verify")
    with pytest.raises(TypeError, match="dict is no named strategy.s settings"):
        small_logic_retriever.with_settings({})  # type: ignore[arg-type]


def test_the_logic_group_reaches_the_retriever(small_logic_retriever):
    """min_confidence (decomposition fallback) is read from the searched strategy's
    settings, not from a global config."""
    sure = small_logic_retriever.with_settings(
        RerankSettings(logic=LogicSettings(min_confidence=1.01))
    )
    (plan,) = sure.plan([QUERY], strategy="rerank")
    assert plan.atoms[0].text == QUERY and len(plan.atoms) == 1
    (plan,) = sure.plan([QUERY], strategy="verify")  # verify's settings are the defaults
    assert len(plan.atoms) > 1


def test_the_architecture_pages_blocks_run(tmp_path, monkeypatch):
    """docs/architecture.md shows strategy -> settings -> pipeline; its blocks run."""
    from logic_rag.paths import project_root
    from tests.markdown_blocks import run_page

    run_page(project_root() / "docs" / "architecture.md", tmp_path, monkeypatch)


def test_settings_pickle():
    import pickle

    settings = changed("quality")
    assert pickle.loads(pickle.dumps(settings)) == settings
