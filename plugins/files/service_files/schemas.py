"""Request and response shapes of the files endpoints (the reference's names)."""

from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields


class UploadQuerySchema(Schema):
    class Meta:
        unknown = EXCLUDE

    append = fields.Boolean(load_default=False)
    ephemeral = fields.Boolean(load_default=False)


class DownloadQuerySchema(Schema):
    class Meta:
        unknown = EXCLUDE

    return_content = fields.Boolean(load_default=False)


class RenameQuerySchema(Schema):
    class Meta:
        unknown = EXCLUDE

    name = fields.String(required=True)


class UserFileSchema(Schema):
    id = fields.UUID()
    name = fields.String()
    path = fields.String()
    size = fields.Integer()
    provider = fields.String()


class UserFileListItemSchema(UserFileSchema):
    user_id = fields.UUID()
    created_at = fields.DateTime()
    updated_at = fields.DateTime()


class FlowUploadSchema(Schema):
    flowId = fields.String()
    file_path = fields.String()


class FileNamesListSchema(Schema):
    files = fields.List(fields.String())


class FilesMessageSchema(Schema):
    message = fields.String()


class FilesDetailSchema(Schema):
    detail = fields.String()


UPLOAD_BODY = {
    "requestBody": {
        "required": True,
        "content": {
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file"],
                    "properties": {"file": {"type": "string", "format": "binary"}},
                }
            }
        },
    }
}
