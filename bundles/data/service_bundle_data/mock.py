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
MOCK_COLUMNS = ["customer_id", "first_name", "last_name", "email", "product", "category", "price", "quantity", "date"]
_FIRST = ["Ada", "Grace", "Alan", "Linus", "Margaret", "Dennis", "Barbara", "Ken", "Frances", "Edsger"]
_LAST = ["Lovelace", "Hopper", "Turing", "Torvalds", "Hamilton", "Ritchie", "Liskov", "Thompson", "Allen", "Dijkstra"]
_PRODUCTS = {
    "Electronics": ["Laptop", "Headphones", "Monitor", "Keyboard"],
    "Books": ["Novel", "Cookbook", "Atlas", "Biography"],
    "Home": ["Lamp", "Chair", "Kettle", "Rug"],
}
_SENTENCES = [
    "The quarterly report shows steady growth across all regions.",
    "Customer feedback highlights fast delivery and friendly support.",
    "The new product line launches next month with three variants.",
    "Inventory levels are healthy ahead of the holiday season.",
    "The team shipped the release on schedule with no regressions.",
]


def _row(index: int) -> dict[str, Any]:
    first, last = secrets.choice(_FIRST), secrets.choice(_LAST)
    category = secrets.choice(list(_PRODUCTS))
    day = datetime.now(UTC).date() - timedelta(days=secrets.randbelow(365))
    return {
        "customer_id": f"CUST-{index + 1:04d}",
        "first_name": first,
        "last_name": last,
        "email": f"{first.lower()}.{last.lower()}@example.com",
        "product": secrets.choice(_PRODUCTS[category]),
        "category": category,
        "price": round(5 + secrets.randbelow(99500) / 100, 2),
        "quantity": 1 + secrets.randbelow(10),
        "date": day.isoformat(),
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
        rows = [_row(i) for i in range(10)]
        total = round(sum(r["price"] * r["quantity"] for r in rows), 2)
        return Data(
            {
                "records": rows,
                "summary": {"count": len(rows), "total_revenue": total, "generated_at": datetime.now(UTC).isoformat()},
            }
        )


COMPONENTS = [MockDataGenerator]
