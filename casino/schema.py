"""The project's OpenAPI schema generator.

Views follow the HackSoft pattern: each APIView nests its own `InputSerializer` and
`OutputSerializer`. drf-spectacular names components by class name alone, so every view's
"Input" and "Output" would collide; components are named after the view instead
(`StaffDepositApi.InputSerializer` -> `StaffDepositApiInput`).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema


class AutoSchema(SpectacularAutoSchema):
    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        cls = type(serializer)
        parts = cls.__qualname__.split(".")
        if len(parts) >= 2 and parts[-2] != "<locals>":
            return parts[-2] + parts[-1].removesuffix("Serializer")
        return str(cls.__name__)
