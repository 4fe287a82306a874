FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml ./
COPY peerrevenue/__init__.py peerrevenue/__init__.py
RUN pip install --no-cache-dir --upgrade pip && mkdir -p papers market accounts \
    && touch papers/__init__.py market/__init__.py accounts/__init__.py \
    && pip install --no-cache-dir --editable .
COPY . .
RUN DJANGO_SECRET_KEY=build-only DJANGO_DEBUG=0 python manage.py collectstatic --no-input -v0
EXPOSE 8000
CMD ["gunicorn", "-c", "python:peerrevenue.gunicorn_conf", "peerrevenue.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2"]
