"""Write the example shop's CSV data, deterministically (the same bytes on every run).

    python bench/generate_example_seeds.py [--out example_project]

Seeds (`seeds/raw_*.csv`) are loaded by the project's SEED models. `external_data/raw_web_events.csv` is the content
of the external table `raw.web_events`, which the project reads but does not build: the demo creates that table.
"""

from __future__ import annotations

import argparse
import csv
import random
from datetime import date, datetime, timedelta
from pathlib import Path

SEED = 20240101
MONTH_START = datetime(2024, 1, 1)
DAYS = 31

FIRST_NAMES = ["Ada", "Bram", "Chloé", "Dev", "Elif", "Femi", "Greta", "Hiro", "Ines", "Jonas", "Kai", "Lena"]
LAST_NAMES = ["Okafor", "Nakamura", "Silva", "Dubois", "Novak", "Jensen", "Rossi", "Khan", "Weber", "Moreau"]
COUNTRIES = ["nl", "de", "fr", "us", "jp", "br"]
PRODUCTS = [
    ("Espresso beans 1kg", "coffee", "24.50"),
    ("Filter beans 1kg", "coffee", "21.00"),
    ("Decaf beans 500g", "coffee", "13.75"),
    ("Green tea 100g", "tea", "8.90"),
    ("Earl grey 250g", "tea", "11.20"),
    ("Ceramic pour-over", "equipment", "32.00"),
    ("Burr grinder", "equipment", "149.00"),
    ("Gooseneck kettle", "equipment", "69.90"),
    ("Paper filters x100", "supplies", "5.50"),
    ("Descaler", "supplies", "9.95"),
    ("Travel mug", "merchandise", "19.00"),
    ("Tote bag", "merchandise", "12.00"),
]
# Weighted so that the status mix looks like a shop: mostly delivered, a few returns.
STATUSES = ["delivered"] * 6 + ["shipped"] * 2 + ["placed"] + ["returned"]
EVENT_TYPES = ["page_view"] * 6 + ["add_to_cart"] * 2 + ["checkout"]


def customers(rng: random.Random, count: int = 60) -> list[dict[str, object]]:
    rows = []
    for customer_id in range(1, count + 1):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        rows.append(
            {
                "customer_id": customer_id,
                "first_name": first,
                # Untrimmed, mixed-case emails give the staging layer something real to clean.
                "email": f" {first}.{last}{customer_id}@Example.com ",
                "country": rng.choice(COUNTRIES).upper() if customer_id % 5 == 0 else rng.choice(COUNTRIES),
                "signup_date": (date(2023, 1, 1) + timedelta(days=rng.randrange(365))).isoformat(),
            }
        )
    return rows


def products() -> list[dict[str, object]]:
    return [
        {"product_id": index, "product_name": name, "category": category, "unit_price": price}
        for index, (name, category, price) in enumerate(PRODUCTS, start=1)
    ]


def orders(rng: random.Random, customer_count: int, count: int = 300) -> list[dict[str, object]]:
    moments = sorted(MONTH_START + timedelta(seconds=rng.randrange(DAYS * 86400)) for _ in range(count))
    # A long tail of buyers (a few loyal, many occasional) and a sixth of the customers who never ordered:
    # every marketing segment gets members.
    buyers = range(1, customer_count - customer_count // 6 + 1)
    weights = [1 / rank**1.3 for rank in buyers]
    return [
        {
            "order_id": 1000 + index,
            "customer_id": rng.choices(buyers, weights)[0],
            "product_id": rng.randint(1, len(PRODUCTS)),
            "quantity": rng.choice([1, 1, 1, 2, 2, 3, 4]),
            "status": rng.choice(STATUSES),
            "ordered_at": moment.isoformat(sep=" "),
        }
        for index, moment in enumerate(moments, start=1)
    ]


def web_events(rng: random.Random, customer_count: int, count: int = 900) -> list[dict[str, object]]:
    moments = sorted(MONTH_START + timedelta(seconds=rng.randrange(DAYS * 86400)) for _ in range(count))
    return [
        {
            "event_id": index,
            # Anonymous visitors have no customer id.
            "customer_id": rng.randint(1, customer_count) if rng.random() < 0.7 else "",
            "event_type": rng.choice(EVENT_TYPES),
            "event_ts": moment.isoformat(sep=" "),
        }
        for index, moment in enumerate(moments, start=1)
    ]


def write_csv(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "example_project")
    args = parser.parse_args()

    rng = random.Random(SEED)
    customer_rows = customers(rng)
    write_csv(args.out / "seeds" / "raw_customers.csv", customer_rows)
    write_csv(args.out / "seeds" / "raw_products.csv", products())
    write_csv(args.out / "seeds" / "raw_orders.csv", orders(rng, len(customer_rows)))
    write_csv(args.out / "external_data" / "raw_web_events.csv", web_events(rng, len(customer_rows)))
    print(f"wrote seeds and external data under {args.out}")


if __name__ == "__main__":
    main()
