MODEL (name db.a, kind FULL);
SELECT id
FROM db.b
{% if %} WHERE id > 1 {% endif %}
