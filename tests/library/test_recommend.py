"""Recommendations learned from what a reader saved, read from stored scores."""

from __future__ import annotations

import datetime as dt
import re
import threading

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.utils import timezone

from library import hot, saves
from library.models import HotPaper, Recommendation, SavedPaper
from library.recommend import readers, similar, text
from tests.factories import TOPICS, make_paper, make_topical_papers
from tests.html import Element, Page


def corpus(category, *, per_topic: int = 12, days: int = 3) -> dict[str, list]:
    return make_topical_papers(category, per_topic=per_topic, days=days)


@pytest.mark.django_db
def test_papers_of_the_saved_topic_come_first(cs_dc, reader):
    papers = corpus(cs_dc)
    for paper in papers["serving"][:4]:
        saves.save(user=reader, paper=paper)
    text.fit()
    readers.refit(user_id=reader.pk)
    ranked = list(
        Recommendation.objects.filter(user=reader).order_by("rank").values_list("paper", flat=True)
    )
    serving = {p.pk for p in papers["serving"][4:]}
    assert set(ranked[: len(serving)]) == serving  # all the other serving papers first
    assert not {p.pk for p in papers["serving"][:4]} & set(ranked)  # nothing already saved
    first = Recommendation.objects.get(user=reader, rank=1)
    assert first.liked == 4 and first.terms
    assert set(first.terms) <= set(TOPICS["serving"].split()) | {
        f"{a} {b}" for a in TOPICS["serving"].split() for b in TOPICS["serving"].split()
    }


@pytest.mark.django_db
def test_each_tag_gets_its_own_picks_and_reason(client, cs_dc, reader):
    papers = corpus(cs_dc)
    client.force_login(reader)
    for paper in papers["serving"][:3]:
        client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": "serving"})
    for paper in papers["storage"][:3]:
        client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": "disks"})
    text.fit()
    readers.refit(user_id=reader.pk)
    page = client.get("/recommended/").content.decode()
    assert "like 3 papers in “serving”" in page and "like 3 papers in “disks”" in page
    top = Recommendation.objects.filter(user=reader).order_by("rank")[:18]
    topics = {p.pk: name for name, ps in papers.items() for p in ps}
    assert {topics[r.paper_id] for r in top} == {"serving", "storage"}


@pytest.mark.django_db
def test_for_you_changes_after_saving_another_topic(client, cs_dc, reader):
    papers = corpus(cs_dc)
    client.force_login(reader)
    text.fit()
    with_save = papers["consensus"][:3]
    for paper in with_save:
        client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "save"})
    readers.refit(user_id=reader.pk)
    before = client.get("/recommended/").content.decode().split("Why:")[0]
    assert any(p.title in before for p in papers["consensus"][3:])
    for paper in with_save:
        client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "unsave"})
    for paper in papers["storage"][:3]:
        client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "save"})
    readers.refit(user_id=reader.pk)
    after = client.get("/recommended/").content.decode()
    first = after.split("Why:")[0]
    assert any(p.title in first for p in papers["storage"][3:])
    home = client.get("/").content.decode()
    assert "For you" in home


@pytest.mark.django_db
def test_a_reader_with_nothing_saved_is_told_how_to_start(client, cs_dc, reader):
    corpus(cs_dc, per_topic=2)
    client.force_login(reader)
    page = client.get("/recommended/").content.decode()
    assert "Save a few papers to start" in page and "Hot this week" in page


@pytest.mark.django_db
def test_the_front_page_tells_a_new_reader_how_to_start_and_what_is_hot(
    client, cs_dc, reader, rival
):
    papers = corpus(cs_dc, per_topic=2)
    saves.save(user=rival, paper=papers["storage"][1])
    client.force_login(reader)
    section = for_you_section(client.get("/").content.decode())
    assert "Save papers you like" in section and "hot this week" in section
    assert papers["storage"][1].title in section and "1 save" in section
    assert "in your library" not in section  # no picks: nothing was learned

    for paper in papers["serving"]:
        client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "save"})
    section = for_you_section(client.get("/").content.decode())
    assert "being learned from your 2 saved papers" in section  # the worker has not run yet
    text.fit()
    readers.refit(user_id=reader.pk)
    section = for_you_section(client.get("/").content.decode())
    assert "like 2 papers in your library" in section and "Save papers you like" not in section
    assert "hot this week" not in section


def without_tokens(page: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


def for_you_section(page: str) -> str:
    return page.split('id="for-you-heading"')[1].split("</section>")[0]


@pytest.mark.django_db
def test_a_reader_with_saves_but_nothing_new_like_them_is_told_so(client, cs_dc, reader):
    papers = corpus(cs_dc, per_topic=2)
    for name in TOPICS:
        for paper in papers[name]:
            saves.save(user=reader, paper=paper)  # every new paper is already theirs
    text.fit()
    readers.refit(user_id=reader.pk)
    client.force_login(reader)
    assert "Nothing new like your library" in client.get("/recommended/").content.decode()
    assert "No paper of the last days is like" in for_you_section(client.get("/").content.decode())


@pytest.mark.django_db
def test_a_hidden_paper_never_appears(client, cs_dc, reader, rival):
    papers = corpus(cs_dc)
    for paper in papers["serving"][:3]:
        saves.save(user=reader, paper=paper)
    victim = papers["serving"][5]
    saves.save(user=rival, paper=victim)
    text.fit()
    readers.refit(user_id=reader.pk)
    similar.store(paper_id=papers["serving"][4].pk)
    hot.refresh()
    client.force_login(reader)
    assert Recommendation.objects.filter(user=reader, paper=victim).exists()
    assert victim.title in client.get("/recommended/").content.decode()
    assert victim.title in client.get("/hot/?period=week").content.decode()
    assert victim.pk in [h.paper_id for h in hot.ranking(period="month")]
    victim.hidden = True
    victim.save()
    client.force_login(reader)
    assert victim.title not in client.get("/recommended/").content.decode()
    assert victim.title not in client.get(papers["serving"][4].get_absolute_url()).content.decode()
    assert victim.title not in client.get("/hot/?period=week").content.decode()
    assert victim.pk not in [h.paper_id for h in hot.ranking(period="month")]
    # and a refit learns nothing from it, and stores nothing of it; nor does the hot list
    readers.refit(user_id=reader.pk)
    assert not Recommendation.objects.filter(paper=victim).exists()
    hot.refresh()
    assert not HotPaper.objects.filter(paper=victim).exists()


@pytest.mark.django_db
def test_similar_papers_on_the_paper_page(client, cs_dc):
    papers = corpus(cs_dc)
    text.fit()
    page = client.get(papers["storage"][0].get_absolute_url()).content.decode()
    section = page.split("Similar papers")[1]
    assert sum(p.title in section for p in papers["storage"][1:]) >= 4
    assert not any(p.title in section for p in papers["consensus"])


@pytest.mark.django_db
def test_hot_counts_saves_over_the_period(client, cs_dc, reader, rival):
    papers = corpus(cs_dc, per_topic=2)
    saves.save(user=reader, paper=papers["serving"][0])
    saves.save(user=rival, paper=papers["serving"][0])
    saves.save(user=rival, paper=papers["storage"][1])
    old = SavedPaper.objects.get(user=rival, paper=papers["storage"][1])
    SavedPaper.objects.filter(pk=old.pk).update(saved_at=timezone.now() - dt.timedelta(days=3))
    assert hot.ranking(period="day") == []  # nothing is counted on a request
    assert hot.refresh() == {"day": 1, "week": 2, "month": 2}
    day = [h.paper_id for h in hot.ranking(period="day")]
    week = [h.paper_id for h in hot.ranking(period="week")]
    assert day == [papers["serving"][0].pk]
    assert week == [papers["serving"][0].pk, papers["storage"][1].pk]
    page = client.get("/hot/?period=day").content.decode()
    assert "2 saves" in page and papers["serving"][0].title in page
    # The counts follow the paper they are about, as a recommendation's "Why" does.
    items = Page.parse(client.get("/hot/?period=week").content.decode()).one("ol", cls="papers")
    entries = [li for li in items.children if isinstance(li, Element) and li.tag == "li"]
    assert [li.classes[0] for li in entries] == ["paper", "hot-counts", "paper", "hot-counts"]
    assert entries[0].id == papers["serving"][0].arxiv_id and entries[1].text.startswith("2 saves")


@pytest.mark.django_db(transaction=True)
def test_twenty_racing_saves_store_the_paper_once(cs_dc, reader):
    paper = make_paper()
    codes: list[int] = []
    barrier = threading.Barrier(20)

    def save() -> None:
        client = Client()
        client.force_login(reader)
        barrier.wait()
        try:
            codes.append(
                client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "save"}).status_code
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=save) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [303] * 20
    assert SavedPaper.objects.filter(user=reader, paper=paper).count() == 1


@pytest.mark.django_db
def test_the_hot_list_is_ranked_again_when_due_not_on_every_request(client, cs_dc, reader, rival):
    papers = corpus(cs_dc, per_topic=2)
    saves.save(user=rival, paper=papers["storage"][0])
    # The first reader finds the lists due: the worker (eager here) ranks them.
    # (The counts of the ranking, not the stars' live counts.)
    assert "<strong>1 save</strong>" in client.get("/hot/?period=day").content.decode()
    saves.save(user=reader, paper=papers["storage"][0])
    page = client.get("/hot/?period=day").content.decode()
    assert "<strong>1 save</strong>" in page  # the stored list, until it is due
    cache.delete(hot.REFRESHED)  # five minutes later
    assert "<strong>2 saves</strong>" in client.get("/hot/?period=day").content.decode()


@pytest.mark.django_db
def test_the_hot_page_says_not_yet_until_the_worker_ranks_the_lists(
    client, cs_dc, reader, monkeypatch
):
    from library.tasks import refresh_hot

    papers = corpus(cs_dc, per_topic=2)
    saves.save(user=reader, paper=papers["storage"][0])
    # A broker but no worker: the refresh is queued, and nobody runs it.
    monkeypatch.setattr(refresh_hot, "apply_async", lambda *args, **kwargs: None)
    page = Page.of(client.get("/hot/?period=day"))
    assert "The hot list is being worked out" in page.text
    assert "No paper was saved" not in page.text
    hot.refresh()  # the worker, at last
    page = Page.of(client.get("/hot/?period=day"))
    assert papers["storage"][0].title in page.text
    assert "being worked out" not in page.text


@pytest.mark.django_db
def test_the_hot_page_says_nothing_happened_when_the_ranking_found_nothing(client, cs_dc, reader):
    paper = corpus(cs_dc, per_topic=2)["storage"][0]
    saves.save(user=reader, paper=paper)
    SavedPaper.objects.update(saved_at=timezone.now() - dt.timedelta(days=3))  # not today
    assert hot.refresh()["day"] == 0
    page = Page.of(client.get("/hot/?period=day"))
    assert "No paper was saved, and no term a new paper mentions was traded" in page.text
    assert "being worked out" not in page.text
    assert paper.title in Page.of(client.get("/hot/?period=week")).text


@pytest.mark.django_db
def test_recommended_reads_a_kept_piece_per_reader(
    client, cs_dc, reader, rival, django_assert_max_num_queries
):
    papers = corpus(cs_dc)
    client.force_login(reader)
    for paper in papers["serving"][:3]:
        client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": "serving"}, follow=True)
    for paper in papers["storage"][:3]:
        saves.save(user=rival, paper=paper)
    text.fit()
    readers.refit(user_id=reader.pk)
    readers.refit(user_id=rival.pk)
    first = client.get("/recommended/").content.decode()
    assert "like 3 papers in “serving”" in first
    with django_assert_max_num_queries(4):  # session, user, the facts, the stars
        again = client.get("/recommended/").content.decode()
    assert without_tokens(again) == without_tokens(first)
    client.force_login(rival)
    theirs = client.get("/recommended/").content.decode()
    assert "like 3 papers in your library" in theirs and "“serving”" not in theirs
    assert any(p.title in theirs.split("Why:")[0] for p in papers["storage"][3:])  # their own

    # A renamed tag moves the reader's shelf: the piece is made again with the new name.
    client.force_login(reader)
    tag = saves.tag_named(user=reader, name="serving")
    assert tag is not None
    client.post("/library/tags/rename/", {"tag": tag.pk, "name": "inference"})
    assert "like 3 papers in “inference”" in client.get("/recommended/").content.decode()
    # So does a refit: a paper saved since is no longer picked.
    saves.save(user=reader, paper=papers["serving"][3])
    readers.refit(user_id=reader.pk)
    page = client.get("/recommended/").content.decode()
    assert papers["serving"][3].title not in page.split("Why:")[0]
    assert papers["serving"][4].title in page


@pytest.mark.django_db
def test_a_hostile_tag_name_in_a_reason_is_shown_escaped(client, cs_dc, reader):
    papers = corpus(cs_dc)
    client.force_login(reader)
    for paper in papers["serving"][:3]:
        client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": "<img src=x onerror=alert(1)>"})
    text.fit()
    readers.refit(user_id=reader.pk)
    page = client.get("/recommended/").content.decode()
    assert "like 3 papers in “&lt;img src=x onerror=alert(1)&gt;”" in page
    assert "<img src=x" not in page
    section = for_you_section(client.get("/").content.decode())
    assert "&lt;img src=x onerror=alert(1)&gt;" in section and "<img src=x" not in section
