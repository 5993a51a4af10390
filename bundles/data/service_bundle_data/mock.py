"""Mock Data (``MockDataGenerator``): sample Message, JSON and Table values for trying flows out.

Values come from :mod:`secrets` (like the reference) so two runs differ; the shapes are fixed:
the table has ``MOCK_COLUMNS`` and ``MOCK_ROWS`` rows.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from core.engine import Component, Data, DataFrame, Message, Output

MOCK_ROWS = 50
#: the reference's table columns (its generated base columns, then its derived ones)
MOCK_COLUMNS = [
    "customer_id",
    "first_name",
    "last_name",
    "email",
    "age",
    "city",
    "country",
    "product",
    "order_date",
    "order_value",
    "quantity",
    "discount",
    "is_premium",
    "satisfaction_score",
    "last_contact",
    "full_name",
    "discounted_value",
    "total_value",
    "age_group",
]
_FIRST = ["Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger"]
_LAST = ["Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra"]
_CITIES = ["Lisbon", "Oslo", "Toronto", "Osaka", "Lyon", "Austin", "Melbourne", "Recife", "Pune", "Leeds"]
_COUNTRIES = ["Portugal", "Norway", "Canada", "Japan", "France", "USA", "Australia", "Brazil", "India", "UK"]
_PRODUCTS = ["Laptop", "Headphones", "Monitor", "Keyboard", "Novel", "Lamp", "Chair", "Kettle"]
_COMPANIES = ["Northwind", "Contoso", "Initech", "Globex", "Umbrella", "Hooli"]
_DEPARTMENTS = ["Engineering", "Sales", "Marketing", "Finance", "Support", "Research"]
_STATUSES = ["active", "pending", "completed", "cancelled", "in_progress"]
_TAGS = ["important", "urgent", "review", "approved", "draft", "final"]
_AGE_GROUPS = ((25, "18-25"), (35, "26-35"), (50, "36-50"), (65, "51-65"))
_SENTENCES = [
    "The quarterly report shows steady growth across all regions.",
    "Customer feedback highlights fast delivery and friendly support.",
    "The new product line launches next month with three variants.",
    "Inventory levels are healthy ahead of the holiday season.",
    "The team shipped the release on schedule with no regressions.",
]


def _day(within_days: int = 365) -> datetime:
    return datetime.now(UTC) - timedelta(days=secrets.randbelow(within_days + 1))


def _row(index: int) -> dict[str, Any]:
    first, last = secrets.choice(_FIRST), secrets.choice(_LAST)
    age = 18 + secrets.randbelow(63)
    order_value = round(10 + secrets.randbelow(99000) / 100, 2)
    quantity = 1 + secrets.randbelow(10)
    discount = round(secrets.randbelow(31) / 100, 2)
    discounted = order_value * (1 - discount)
    return {
        "customer_id": f"CUST-{10000 + index}",
        "first_name": first,
        "last_name": last,
        "email": f"{first.lower()}.{last.lower()}@example.com",
        "age": age,
        "city": secrets.choice(_CITIES),
        "country": secrets.choice(_COUNTRIES),
        "product": secrets.choice(_PRODUCTS),
        "order_date": _day().date().isoformat(),
        "order_value": order_value,
        "quantity": quantity,
        "discount": discount,
        "is_premium": secrets.choice([True, False]),
        "satisfaction_score": 1 + secrets.randbelow(10),
        "last_contact": _day().date().isoformat(),
        "full_name": f"{first} {last}",
        "discounted_value": discounted,
        "total_value": discounted * quantity,
        "age_group": next((label for bound, label in _AGE_GROUPS if age <= bound), "65+"),
    }


def _record(index: int) -> dict[str, Any]:
    return {
        "id": f"REC-{1000 + index}",
        "name": f"Sample Record {index + 1}",
        "company": secrets.choice(_COMPANIES),
        "department": secrets.choice(_DEPARTMENTS),
        "status": secrets.choice(_STATUSES),
        "category": secrets.choice("ABCD"),
        "value": round(100 + secrets.randbelow(990000) / 100, 2),
        "quantity": 1 + secrets.randbelow(100),
        "rating": round(1 + secrets.randbelow(41) / 10, 1),
        "is_active": secrets.choice([True, False]),
        "created_date": _day().isoformat(),
        "tags": [secrets.choice(_TAGS) for _ in range(1 + secrets.randbelow(3))],
    }


class MockDataGenerator(Component):
    key = "MockDataGenerator"
    display_name = "Mock Data"
    display_names = {"en": "Mock Data", "fr": "Données fictives", "de": "Beispieldaten", "es": "Datos de prueba"}
    description = "Generate mock data for testing and development."
    icon = "database"
    category = "data_source"
    inputs = []
    outputs = [
        Output("dataframe_output", "Result", "generate_dataframe_output", ["Table"]),
        Output("message_output", "Result", "generate_message_output", ["Message"]),
        Output("data_output", "Result", "generate_data_output", ["JSON"]),
    ]

    def generate_dataframe_output(self) -> DataFrame:
        frame = DataFrame([_row(i) for i in range(MOCK_ROWS)], columns=MOCK_COLUMNS)
        self.status = f"{len(frame)} rows"
        return frame

    def generate_message_output(self) -> Message:
        count = 3 + secrets.randbelow(3)
        text = " ".join(secrets.choice(_SENTENCES) for _ in range(count))
        return Message(text=text)

    def generate_data_output(self) -> Data:
        records = [_record(0)]  # the reference's JSON output holds one record
        return Data(
            {
                "records": records,
                "summary": {
                    "total_count": len(records),
                    "active_count": sum(1 for r in records if r["is_active"]),
                    "total_value": sum(r["value"] for r in records),
                    "average_rating": round(sum(r["rating"] for r in records) / len(records), 2),
                    "categories": sorted({r["category"] for r in records}),
                    "companies": sorted({r["company"] for r in records}),
                },
            }
        )


COMPONENTS = [MockDataGenerator]
