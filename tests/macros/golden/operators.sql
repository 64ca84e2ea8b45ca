-- Golden cases for the macro evaluator: a title line starting with "-- #", the input, a line "-- =>", the
-- expected Spark SQL (statements separated by ";"). Variables available to every case: x = 'abc', n = 3,
-- flag = true, cols = ['a', 'b']. Interval macros stay placeholders (load time).

-- # each: literal numbers fill the select list
SELECT @EACH([4, 5, 6], number -> number) FROM table1
-- =>
SELECT 4, 5, 6 FROM table1

-- # each: quoted values stay quoted, alias suffix with @x
SELECT @EACH(['4','5','6'], x -> CASE WHEN favorite_number = x THEN 1 ELSE 0 END AS column_@x) FROM t
-- =>
SELECT CASE WHEN favorite_number = '4' THEN 1 ELSE 0 END AS column_4, CASE WHEN favorite_number = '5' THEN 1 ELSE 0 END AS column_5, CASE WHEN favorite_number = '6' THEN 1 ELSE 0 END AS column_6 FROM t

-- # each: unquoted values are columns
SELECT @EACH([4,5,6], x -> CASE WHEN favorite_number = x THEN 1 ELSE 0 END AS column) FROM t
-- =>
SELECT CASE WHEN favorite_number = 4 THEN 1 ELSE 0 END AS column, CASE WHEN favorite_number = 5 THEN 1 ELSE 0 END AS column, CASE WHEN favorite_number = 6 THEN 1 ELSE 0 END AS column FROM t

-- # each: over a config list variable
SELECT @EACH(@cols, c -> MAX(c) AS max_@c) FROM t
-- =>
SELECT MAX('a') AS max_a, MAX('b') AS max_b FROM t

-- # each: in GROUP BY
SELECT a, b FROM t GROUP BY @EACH([a, b], c -> c)
-- =>
SELECT a, b FROM t GROUP BY a, b

-- # if: true without else
SELECT col1, @IF(1 > 0, sensitive_col) FROM t
-- =>
SELECT col1, sensitive_col FROM t

-- # if: false without else disappears
SELECT col1, @IF(1 > 2, sensitive_col) FROM t
-- =>
SELECT col1 FROM t

-- # if: false with else
SELECT col1, @IF(1 > 2, sensitive_col, nonsensitive_col) FROM t
-- =>
SELECT col1, nonsensitive_col FROM t

-- # if: string equality
SELECT @IF('a' = 'a', 1, 2) AS v
-- =>
SELECT 1 AS v

-- # if: string inequality
SELECT @IF('a' != 'b', 1, 2) AS v
-- =>
SELECT 1 AS v

-- # if: between
SELECT @IF(2 BETWEEN 1 AND 3, 1, 2) AS v
-- =>
SELECT 1 AS v

-- # if: in list
SELECT @IF('a' IN ('a', 'b'), 1, 2) AS v
-- =>
SELECT 1 AS v

-- # if: on a config variable
SELECT @IF(@flag, a, b) AS v FROM t
-- =>
SELECT a AS v FROM t

-- # if: in a where clause
SELECT a FROM t WHERE @IF(@n > 2, a > 0, a < 0)
-- =>
SELECT a FROM t WHERE a > 0

-- # if: a statement, true
@IF(1 = 1, ALTER TABLE t ADD COLUMNS (c INT));
SELECT 1 AS a
-- =>
ALTER TABLE t ADD COLUMNS (c INT); SELECT 1 AS a

-- # if: a statement, false
@IF(1 = 2, ALTER TABLE t ADD COLUMNS (c INT));
SELECT 1 AS a
-- =>
SELECT 1 AS a

-- # if: on the interval waits for rendering
SELECT a FROM t WHERE @IF(@start_ds > '2020-01-01', a, b) = 1
-- =>
SELECT a FROM t WHERE @IF(@start_ds > '2020-01-01', a, b) = 1

-- # def: a value
@DEF(size, 1);
SELECT item_id FROM m WHERE item_size > @size
-- =>
SELECT item_id FROM m WHERE item_size > 1

-- # def: a string
@DEF(region, 'EU');
SELECT a FROM t WHERE r = @region
-- =>
SELECT a FROM t WHERE r = 'EU'

-- # def: a lambda
@DEF(rank_to_int, x -> CASE WHEN LEFT(x, 1) = 'A' THEN 1 WHEN LEFT(x, 1) = 'B' THEN 2 END);
SELECT id, @rank_to_int(cust_rank_1) AS cust_rank_1_int FROM some.model
-- =>
SELECT id, CASE WHEN LEFT(cust_rank_1, 1) = 'A' THEN 1 WHEN LEFT(cust_rank_1, 1) = 'B' THEN 2 END AS cust_rank_1_int FROM some.model

-- # def: a two-argument lambda
@DEF(pythag, (x, y) -> SQRT(POW(x, 2) + POW(y, 2)));
SELECT sideA, sideB, @pythag(sideA, sideB) AS sideC FROM some.triangle
-- =>
SELECT sideA, sideB, SQRT(POW(sideA, 2) + POW(sideB, 2)) AS sideC FROM some.triangle

-- # def: nested lambdas
@DEF(area, r -> PI() * r * r);
@DEF(container_volume, (r, h) -> @area(@r) * h);
SELECT container_id, @container_volume((cont_di / 2), cont_hi) AS volume FROM t
-- =>
SELECT container_id, PI() * (cont_di / 2) * (cont_di / 2) * cont_hi AS volume FROM t

-- # def: three-argument lambda
@DEF(nrr, (s, e, c) -> (s + e - c) / s);
SELECT @nrr(fy21_mrr, fy21_expansions, fy21_churns) AS fy21 FROM some.revenue
-- =>
SELECT (fy21_mrr + fy21_expansions - fy21_churns) / fy21_mrr AS fy21 FROM some.revenue

-- # def: a variable used in another def
@DEF(a, 2);
@DEF(b, @a * 3);
SELECT @EVAL(@b) AS v
-- =>
SELECT 6 AS v

-- # eval: arithmetic
@DEF(x, 1);
SELECT @EVAL(5 + @x) AS my_six FROM t
-- =>
SELECT 6 AS my_six FROM t

-- # eval: string concatenation
SELECT @EVAL('a' || 'b') AS v
-- =>
SELECT 'ab' AS v

-- # filter then each
SELECT @EACH(@FILTER([1, 2, 3], x -> x > 1), y -> y * 10) FROM t
-- =>
SELECT 2 * 10, 3 * 10 FROM t

-- # reduce: sum
SELECT @REDUCE([1, 2, 3, 4], (x, y) -> x + y) AS total
-- =>
SELECT 1 + 2 + 3 + 4 AS total

-- # reduce of each: a where predicate
SELECT my_column FROM t WHERE @REDUCE(@EACH([col1, col2, col3], x -> x = 1), (x, y) -> x AND y)
-- =>
SELECT my_column FROM t WHERE col1 = 1 AND col2 = 1 AND col3 = 1

-- # sql: a string parsed as SQL
SELECT @SQL('a + 1') AS b FROM t
-- =>
SELECT a + 1 AS b FROM t

-- # sql: built from a variable
@DEF(col, 'price');
SELECT @SQL(@col) AS v FROM t
-- =>
SELECT price AS v FROM t

-- # generate_surrogate_key
SELECT @GENERATE_SURROGATE_KEY(a, b, c) FROM foo
-- =>
SELECT MD5(CONCAT(COALESCE(CAST(a AS STRING), '_sqlmesh_surrogate_key_null_'), '|', COALESCE(CAST(b AS STRING), '_sqlmesh_surrogate_key_null_'), '|', COALESCE(CAST(c AS STRING), '_sqlmesh_surrogate_key_null_'))) FROM foo

-- # generate_surrogate_key with a hash function
SELECT @GENERATE_SURROGATE_KEY(a, hash_function := 'SHA2') AS k FROM foo
-- =>
SELECT SHA2(CONCAT(COALESCE(CAST(a AS STRING), '_sqlmesh_surrogate_key_null_'))) AS k FROM foo

-- # safe_add
SELECT @SAFE_ADD(a, b) FROM foo
-- =>
SELECT CASE WHEN a IS NULL AND b IS NULL THEN NULL ELSE COALESCE(a, 0) + COALESCE(b, 0) END FROM foo

-- # safe_add of three
SELECT @SAFE_ADD(a, b, c) AS s FROM foo
-- =>
SELECT CASE WHEN a IS NULL AND b IS NULL AND c IS NULL THEN NULL ELSE COALESCE(a, 0) + COALESCE(b, 0) + COALESCE(c, 0) END AS s FROM foo

-- # safe_sub
SELECT @SAFE_SUB(a, b) FROM foo
-- =>
SELECT CASE WHEN a IS NULL AND b IS NULL THEN NULL ELSE COALESCE(a, 0) - COALESCE(b, 0) END FROM foo

-- # safe_div
SELECT @SAFE_DIV(a, b) FROM foo
-- =>
SELECT a / NULLIF(b, 0) FROM foo

-- # haversine in miles
SELECT @HAVERSINE_DISTANCE(driver_y, driver_x, passenger_y, passenger_x, 'mi') AS dist FROM rides
-- =>
SELECT 7922 * ASIN(SQRT((POWER(SIN(RADIANS((passenger_y - driver_y) / 2)), 2)) + (COS(RADIANS(driver_y)) * COS(RADIANS(passenger_y)) * POWER(SIN(RADIANS((passenger_x - driver_x) / 2)), 2)))) * 1.0 AS dist FROM rides

-- # haversine in kilometres
SELECT @HAVERSINE_DISTANCE(a, b, c, d, 'km') AS dist FROM rides
-- =>
SELECT 7922 * ASIN(SQRT((POWER(SIN(RADIANS((c - a) / 2)), 2)) + (COS(RADIANS(a)) * COS(RADIANS(c)) * POWER(SIN(RADIANS((d - b) / 2)), 2)))) * 1.60934 AS dist FROM rides

-- # pivot
SELECT date_day, @PIVOT(status, ['cancelled', 'completed']) FROM rides GROUP BY 1
-- =>
SELECT date_day, SUM(CASE WHEN status = 'cancelled' THEN 1 ELSE 0 END) AS `cancelled`, SUM(CASE WHEN status = 'completed' THEN 1 ELSE 0 END) AS `completed` FROM rides GROUP BY 1

-- # pivot with options
SELECT @PIVOT(status, [done], agg := 'MAX', prefix := 'n_', quote := FALSE) FROM rides
-- =>
SELECT MAX(CASE WHEN status = done THEN 1 ELSE 0 END) AS n_done FROM rides

-- # and drops NULL operands
SELECT a FROM t WHERE @AND(a > 1, NULL, b < 2)
-- =>
SELECT a FROM t WHERE a > 1 AND b < 2

-- # and of a false if
SELECT a FROM t WHERE @AND(TRUE, @IF(1 = 2, b = 1))
-- =>
SELECT a FROM t WHERE TRUE

-- # or
SELECT @OR(TRUE, NULL) AS v
-- =>
SELECT TRUE AS v

-- # where clause operator, true
@DEF(size, 1);
SELECT item_id FROM m @WHERE(1 < 2) item_id > @size GROUP BY item_id
-- =>
SELECT item_id FROM m WHERE item_id > 1 GROUP BY item_id

-- # where clause operator, false
SELECT item_id FROM m @WHERE(1 > 2) item_id > 1 GROUP BY item_id
-- =>
SELECT item_id FROM m GROUP BY item_id

-- # where clause operator with OR in the body
SELECT a FROM t @WHERE(TRUE) a = 1 OR b = 2 OR c = 3
-- =>
SELECT a FROM t WHERE a = 1 OR b = 2 OR c = 3

-- # where clause operator on variables
@DEF(left_number, 1);
@DEF(right_number, 2);
SELECT a FROM t @WHERE(@left_number < @right_number) a > 0
-- =>
SELECT a FROM t WHERE a > 0

-- # with clause operator
@WITH(True) all_cities AS (SELECT * FROM city) SELECT * FROM all_cities
-- =>
WITH all_cities AS (SELECT * FROM city) SELECT * FROM all_cities

-- # join clause operator, true
SELECT * FROM all_cities LEFT OUTER @JOIN(True) country ON city.country = country.name
-- =>
SELECT * FROM all_cities LEFT OUTER JOIN country ON city.country = country.name

-- # join clause operator, false
SELECT * FROM all_cities LEFT OUTER @JOIN(False) country ON city.country = country.name
-- =>
SELECT * FROM all_cities

-- # group by clause operator
SELECT * FROM all_cities @GROUP_BY(True) city_id
-- =>
SELECT * FROM all_cities GROUP BY city_id

-- # having clause operator
SELECT COUNT(city_pop) AS population FROM all_cities GROUP BY city_id @HAVING(True) population > 1000
-- =>
SELECT COUNT(city_pop) AS population FROM all_cities GROUP BY city_id HAVING population > 1000

-- # order by and limit clause operators, true
SELECT * FROM all_cities @ORDER_BY(True) city_pop @LIMIT(True) 10
-- =>
SELECT * FROM all_cities ORDER BY city_pop LIMIT 10

-- # order by and limit clause operators, false
SELECT * FROM all_cities @ORDER_BY(False) city_pop @LIMIT(False) 10
-- =>
SELECT * FROM all_cities

-- # clause operator waiting for the interval
SELECT a FROM t @WHERE(@start_ds > '2024-01-01') a = 1
-- =>
SELECT a FROM t WHERE __SMK_WHERE(@start_ds > '2024-01-01') OR a = 1

-- # var with a default
SELECT @VAR('missing_var', 0) AS v, @VAR('x') AS w
-- =>
SELECT 0 AS v, 'abc' AS w

-- # global variables by name, case-insensitive
SELECT a FROM t WHERE r = @X AND n < @n
-- =>
SELECT a FROM t WHERE r = 'abc' AND n < 3

-- # gateway
SELECT @gateway AS g, @GATEWAY() AS h
-- =>
SELECT 'local' AS g, 'local' AS h

-- # interpolation in identifiers and table names
SELECT @{x}_column, my_@{x}_col FROM db.@{x}
-- =>
SELECT abc_column, my_abc_col FROM db.abc

-- # a variable as a table name
@DEF(source, 'db.events');
SELECT * FROM @source AS e
-- =>
SELECT * FROM db.events AS e

-- # strings and comments are text
SELECT '@EACH(x)' AS a /* @IF(1, 2) */ FROM t
-- =>
SELECT '@EACH(x)' AS a FROM t

-- # interval macros stay placeholders
SELECT a FROM t WHERE ds BETWEEN @start_ds AND @end_ds AND ts < @execution_ts
-- =>
SELECT a FROM t WHERE ds BETWEEN @start_ds AND @end_ds AND ts < @execution_ts

-- # this_model stays a placeholder
SELECT a FROM @this_model AS prev
-- =>
SELECT a FROM @this_model AS prev

-- # date spine
SELECT * FROM (@DATE_SPINE('day', '2024-01-01', '2024-01-03'))
-- =>
SELECT * FROM (SELECT _exploded.date_day AS date_day FROM EXPLODE(CAST(SEQUENCE(CAST('2024-01-01' AS DATE), CAST('2024-01-03' AS DATE), INTERVAL '1' DAY) AS ARRAY<DATE>)) AS _exploded(date_day))

-- # date spine by month
SELECT * FROM (@DATE_SPINE('month', '2024-01-01', '2024-06-01'))
-- =>
SELECT * FROM (SELECT _exploded.date_month AS date_month FROM EXPLODE(CAST(SEQUENCE(CAST('2024-01-01' AS DATE), CAST('2024-06-01' AS DATE), INTERVAL '1' MONTH) AS ARRAY<DATE>)) AS _exploded(date_month))

-- # nested calls: each inside if
SELECT @IF(TRUE, @EACH([a, b], c -> c + 1)) FROM t
-- =>
SELECT a + 1, b + 1 FROM t

-- # macros in a pre-statement
@DEF(k, 'v');
SET spark.sm.key = @k;
SELECT 1 AS a
-- =>
SET spark.sm.key = 'v'; SELECT 1 AS a

-- # deduplicate: one row per key, the latest first
@DEDUPLICATE(raw.events, [id, CAST(ds AS DATE)], ['updated_at DESC', 'status ASC'])
-- =>
SELECT _sparkmesh_row.* FROM (SELECT STRUCT(*) AS _sparkmesh_row, ROW_NUMBER() OVER (PARTITION BY id, CAST(ds AS DATE) ORDER BY updated_at DESC, status ASC) AS _sparkmesh_rank FROM raw.events) AS _sparkmesh_dedup WHERE _sparkmesh_rank = 1

-- # union of two tables waits for their schemas
SELECT * FROM (@UNION('distinct', db.foo, db.bar))
-- =>
SELECT * FROM (@UNION('distinct', db.foo, db.bar))

-- # star waits for the relation's schema
SELECT @STAR(db.foo, f, [c], 'baz_') FROM db.foo AS f
-- =>
SELECT @STAR(db.foo, f, ARRAY(c), 'baz_') FROM db.foo AS f
