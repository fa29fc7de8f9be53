"""Each named strategy is built from its own typed settings (``logic_rag.strategy_settings``),
whose defaults are the deprecated ``LogicConfig``'s; ``LogicConfig.settings_for`` is the
one mapping between them, checked here field by field for every strategy."""

from __future__ import annotations

import json
import warnings
from dataclasses import fields

import pytest

from logic_rag.strategies import STRATEGIES, LogicConfig, logic_config_name, pipeline_of
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

#: Every LogicConfig field away from its default (valid values; nothing loads).
CHANGED = LogicConfig(
    candidates=50,
    atom_depth=200,
    threshold_rank=10,
    temperature=0.2,
    passage_weight=0.3,
    rerank_weight=0.4,
    positive_prior=0.3,
    setops_query_weight=0.2,
    tnorm="godel",
    negation_weight=0.5,
    min_confidence=0.2,
    verify_atom_candidates=10,
    verify_weight=0.6,
    verifier="llm:qwen2.5-1.5b",
    verifier_atoms="all",
    verifier_top=20,
    verifier_weight=0.5,
    quality_bounds="calibrated",
    quality_max_calls=7,
    quality_pool=30,
    quality_delta=0.2,
    quality_thresholds="sample.json",
    quality_cheap="cross-encoder:some-folder",
    quality_whole_query=True,
    quality_verifier_atoms="positive",
    llm_rerank_top=9,
    exclude_violations=0.7,
    exclusion_mode="drop",
    llm_deadline_s=5.0,
    verdict_calibration="calibration.json",
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
def test_the_defaults_are_logic_configs(name):
    """The pipeline of the default settings is the one of the default LogicConfig."""
    settings = STRATEGIES[name].settings()
    assert LogicConfig().settings_for(name) == settings
    want = pipeline_of(name, LogicConfig()).to_dict()
    assert pipeline_of(name, settings).to_dict() == want
    assert pipeline_of(name).to_dict() == want


@pytest.mark.parametrize("name", STRATEGIES)
def test_settings_for_maps_every_field(name):
    settings = CHANGED.settings_for(name)
    assert type(settings) is STRATEGIES[name].settings
    default = _flat(STRATEGIES[name].settings())
    for field_name, (owner, value) in _flat(settings).items():
        legacy = logic_config_name(STRATEGIES[name].settings, field_name)
        assert value == getattr(CHANGED, legacy), (name, field_name, owner)
        assert value != default[field_name][1], (name, field_name)  # really mapped
    assert pipeline_of(name, settings).to_dict() == pipeline_of(name, CHANGED).to_dict()


def test_every_logic_config_field_reaches_some_strategy():
    read = {
        logic_config_name(STRATEGIES[n].settings, f)
        for n in STRATEGIES
        for f in _flat(CHANGED.settings_for(n))
    }
    assert read == {f.name for f in fields(LogicConfig)}


def test_the_weights_are_each_strategys_own():
    assert CHANGED.settings_for("rerank").truth_weight == CHANGED.rerank_weight
    for name in ("verify", "quality", "llm-rerank"):
        assert CHANGED.settings_for(name).truth_weight == CHANGED.verify_weight
    assert CHANGED.settings_for("setops").cosine_weight == CHANGED.setops_query_weight


@pytest.mark.parametrize("config", [LogicConfig(), CHANGED], ids=["default", "changed"])
@pytest.mark.parametrize("name", STRATEGIES)
def test_settings_round_trip_as_plain_json(name, config):
    settings = config.settings_for(name)
    text = json.dumps(settings.to_dict(), allow_nan=False)
    again = type(settings).from_dict(json.loads(text))
    assert again == settings
    assert type(settings).from_dict({}) == type(settings)()  # missing fields: defaults


def test_a_verifier_object_has_no_json_form():
    from logic_rag.verifiers.llm import LLMVerifier

    class Generator:
        name = "mine"

    settings = VerifySettings(verifier=LLMVerifier(generator=Generator()))
    with pytest.raises(TypeError, match="VerifySettings.verifier.*spec string"):
        settings.to_dict()


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
        (lambda: LogicConfig(quality_pool=0), r"pool must be >= 1 .*settings_for\('quality'\)"),
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


def test_settings_rank_as_the_config_that_maps_to_them(small_logic_retriever):
    from logic_rag.logic_retriever import LogicRetriever

    base = small_logic_retriever
    old = base.with_config(verify_weight=0.3, positive_prior=0.2, verify_atom_candidates=5)
    new = base.with_settings(
        VerifySettings(truth_weight=0.3, positive_prior=0.2, atom_candidates=5)
    )
    assert _ids(new.search(QUERY, k=10, strategy="verify")) == _ids(
        old.search(QUERY, k=10, strategy="verify")
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
        assert made.describe()["settings"]["truth_weight"] == 0.3


def test_with_settings_keeps_each_class_and_refuses_mixing_with_config(small_logic_retriever):
    both = small_logic_retriever.with_settings(
        FusionSettings(negation_weight=0.5), RerankSettings(candidates=20)
    )
    assert both.settings_for("fusion") == both.settings_for("fusion-product")
    assert both.settings_for("fusion").negation_weight == 0.5
    assert both.settings_for("rerank").candidates == 20
    assert small_logic_retriever.settings_for("rerank").candidates == 100  # unchanged
    switched = small_logic_retriever.with_settings(VerifySettings(), strategy="verify")
    assert switched.strategy == "verify"
    with pytest.raises(ValueError, match="use with_settings"):
        both.with_config(rerank_weight=0.1)
    with pytest.raises(TypeError, match="strategy 'verify' takes VerifySettings"):
        small_logic_retriever.with_settings(RerankSettings(), strategy="verify")
    with pytest.raises(TypeError, match="LogicConfig is no named strategy.s settings"):
        small_logic_retriever.with_settings(LogicConfig())  # type: ignore[arg-type]


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


def test_logic_config_warns_only_at_the_public_entry_points(small_logic_retriever, tmp_path):
    from logic_rag.integrations._rerank import CandidateReranker
    from logic_rag.logic_retriever import LogicRetriever

    base = small_logic_retriever
    config = LogicConfig(rerank_weight=0.2)  # making one does not warn (internal code does)
    with pytest.warns(DeprecationWarning, match=r"LogicRetriever\(config=...\).*settings="):
        legacy = LogicRetriever(base.dense, passages=base.passages, config=config)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # internal code: mapping, building, searching, cloning, with_config, describe
        pipeline_of("rerank", config)
        legacy.search(QUERY, k=5)
        legacy.with_config(rerank_weight=0.3).search(QUERY, k=5, strategy="verify")
        legacy.describe()
        assert legacy.settings_for("rerank").truth_weight == 0.2
    out = base.save(tmp_path / "index")
    with pytest.warns(DeprecationWarning, match=r"LogicRetriever.load\(config=...\)"):
        loaded = LogicRetriever.load(out, model=base.dense.encoder, config=config)
    assert loaded.settings_for("rerank").truth_weight == 0.2
    docs = base.documents[:30]
    with pytest.warns(DeprecationWarning, match=r"LogicRetriever.build\(config=...\)") as caught:
        LogicRetriever.build(docs, model=base.dense.encoder, passages=False, config=config)
    assert len([w for w in caught if w.category is DeprecationWarning]) == 1  # once, not twice
    with pytest.warns(DeprecationWarning, match="the reranker's config="):
        CandidateReranker(base.dense.encoder, config=config)
    with pytest.raises(TypeError, match="config must be a LogicConfig"):
        LogicRetriever(base.dense, config=RerankSettings())  # type: ignore[arg-type]


def test_the_architecture_pages_blocks_run(tmp_path, monkeypatch):
    """docs/architecture.md shows strategy -> settings -> pipeline; its blocks run."""
    from logic_rag.paths import project_root
    from tests.markdown_blocks import run_page

    run_page(project_root() / "docs" / "architecture.md", tmp_path, monkeypatch)


def test_pickles_of_both_forms_load():
    import pickle

    assert pickle.loads(pickle.dumps(CHANGED)) == CHANGED
    settings = CHANGED.settings_for("quality")
    assert pickle.loads(pickle.dumps(settings)) == settings
