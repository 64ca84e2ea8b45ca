import pytest

from dagster_sparkmesh.errors import PlanError
from dagster_sparkmesh.plan.selectors import parse_selector, select_models


@pytest.fixture
def shop(model, project):
    """raw.events → stg.orders → mart.revenue, stg.orders → mart.customers; raw.refunds alone."""
    return project(
        model("raw.events", "SELECT id, ds FROM src.events", ["src.events"], tags=("ingest", "expensive")),
        model("raw.refunds", "SELECT id, ds FROM src.refunds", ["src.refunds"], tags=("ingest",)),
        model("stg.orders", "SELECT id, ds FROM raw.events", ["raw.events"]),
        model("mart.revenue", "SELECT id, ds FROM stg.orders", ["stg.orders"], tags=("Finance",)),
        model("mart.customers", "SELECT id, ds FROM stg.orders", ["stg.orders"], tags=("exports",)),
    ).models


def test_exact_names_are_case_insensitive_and_come_out_in_dag_order(shop):
    assert select_models(shop, ["MART.Revenue", "raw.events"]) == ("raw.events", "mart.revenue")


def test_wildcards_match_whole_names(shop):
    assert set(select_models(shop, ["mart*"])) == {"mart.revenue", "mart.customers"}
    assert set(select_models(shop, ["*.orders", "raw.e?ents"])) == {"stg.orders", "raw.events"}


def test_tags_exact_and_wildcard_ignore_case(shop):
    assert select_models(shop, ["tag:finance"]) == ("mart.revenue",)
    assert set(select_models(shop, ["tag:exp*"])) == {"raw.events", "mart.customers"}
    assert set(select_models(shop, ["tag:ingest"])) == {"raw.events", "raw.refunds"}


def test_plus_before_adds_upstream_and_after_adds_downstream(shop):
    assert set(select_models(shop, ["+mart.revenue"])) == {"mart.revenue", "stg.orders", "raw.events"}
    assert set(select_models(shop, ["raw.events+"])) == {"raw.events", "stg.orders", "mart.revenue", "mart.customers"}
    assert set(select_models(shop, ["+stg.orders+"])) == {"raw.events", "stg.orders", "mart.revenue", "mart.customers"}
    assert set(select_models(shop, ["tag:finance+"])) == {"mart.revenue"}


def test_external_parents_are_never_selected(shop):
    assert "src.events" not in select_models(shop, ["+raw.events"])


def test_unknown_name_lists_near_matches(shop):
    with pytest.raises(PlanError) as caught:
        select_models(shop, ["mart.revenu"])
    assert "no model matches 'mart.revenu'" in str(caught.value)
    assert "did you mean mart.revenue" in str(caught.value)


def test_unknown_tag_lists_near_tags(shop):
    with pytest.raises(PlanError) as caught:
        select_models(shop, ["tag:finanse"])
    assert "tag:finance" in caught.value.hint


def test_wildcard_matching_nothing_is_an_error_too(shop):
    with pytest.raises(PlanError, match="no model matches 'dwh\\*'"):
        select_models(shop, ["dwh*"])


@pytest.mark.parametrize("text", ["+", "++", "tag:", "a+b"])
def test_malformed_selectors(text):
    with pytest.raises(PlanError, match="malformed model selector"):
        parse_selector(text)


def test_parse_selector_fields():
    selector = parse_selector("+tag:Exp*+")
    assert (selector.pattern, selector.by_tag, selector.upstream, selector.downstream) == ("Exp*", True, True, True)
